import { isObject, SkippedString, unescapeJsonString } from "../sparse-json.js";
import type { Step } from "./types.js";

/** A tool's one-line summary is cut here: it is a label, not the call's input. */
export const SUMMARY_CHARS = 200;
/** A failed call's reason is cut here: tool output can be a whole log. */
export const ERROR_CHARS = 2000;

/**
 * A text the agent wrote, whole: a short string as it is, a long one (read as a SkippedString
 * while its line's buffer is still valid) decoded now. Anything else: undefined. With
 * `maxChars`, a long one is decoded only as far as it takes to show that many characters (a
 * summary of a 100 MiB heredoc does not decode it all); the caller clips what it gets.
 */
export function textOf(value: unknown, maxChars = Infinity): string | undefined {
  if (typeof value === "string") return value;
  if (!(value instanceof SkippedString) || value.raw === undefined) return undefined;
  // A character is at most 4 bytes of UTF-8: one more than asked shows that the text goes on.
  return unescapeJsonString(value.raw, (maxChars + 1) * 4)?.bytes.toString("utf8");
}

/**
 * The text of a message's content: a string, or the `text` of its text blocks joined (thinking
 * left out); with `maxChars`, long strings decoded only so far (as `textOf`).
 */
export function contentText(content: unknown, maxChars = Infinity): string | undefined {
  const direct = textOf(content, maxChars);
  if (direct !== undefined) return direct;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const block of content) {
    if (!isObject(block) || block.type !== "text") continue;
    const text = textOf(block.text, maxChars);
    if (text !== undefined) parts.push(text);
  }
  return parts.length === 0 ? undefined : parts.join("\n");
}

/** The start of a text, on one line and at most `max` characters ("…" where it was cut). */
export function clip(text: string, max: number, oneLine = false): string {
  let out = oneLine ? (text.trim().split(/\r?\n/, 1)[0] ?? "") : text;
  if (oneLine && out.length < text.trim().length) out += " …";
  if (out.length <= max) return out;
  // Not in the middle of a surrogate pair: the cut text stays valid UTF-16.
  let end = max - 1;
  const code = out.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return out.slice(0, end) + "…";
}

/** The input fields that say what a call does, most telling first: a command, a path, a query. */
const SUMMARY_FIELDS = [
  "command",
  "cmd",
  "file_path",
  "filePath",
  "notebook_path",
  "absolute_path",
  "pattern",
  "query",
  "url",
  "path",
  "paths",
  "source",
  "description",
  "prompt",
  "name",
];

/**
 * A tool call's one-line summary from its input: the first telling field (an argv array is joined),
 * else the files it names, else a text input (a patch) by its first line.
 */
export function summaryOf(input: unknown, files: readonly string[] = []): string {
  if (isObject(input)) {
    for (const field of SUMMARY_FIELDS) {
      const value = input[field];
      const text = Array.isArray(value)
        ? value.every((v) => typeof v === "string")
          ? value.join(" ")
          : undefined
        : textOf(value, SUMMARY_CHARS);
      if (text !== undefined && text.trim() !== "") return clip(text, SUMMARY_CHARS, true);
    }
  }
  if (files.length > 0) return clip(files.join(", "), SUMMARY_CHARS, true);
  const text = textOf(input, SUMMARY_CHARS);
  return text === undefined ? "" : clip(text, SUMMARY_CHARS, true);
}

/** A failure's reason: a string, or an object's `message` (as most agents nest it), cut to ERROR_CHARS. */
export function reasonOf(value: unknown): string | undefined {
  const text =
    textOf(value, ERROR_CHARS) ??
    (isObject(value) ? (textOf(value.message, ERROR_CHARS) ?? textOf(value.error, ERROR_CHARS) ?? reasonOf(value.data)) : undefined);
  return text === undefined || text === "" ? undefined : clip(text, ERROR_CHARS);
}

/** The steps of one text, none when it is empty. */
export function textStep(kind: "prompt" | "text", text: string | undefined): Step[] {
  return text === undefined || text.trim() === "" ? [] : [{ kind, text }];
}

/** The paths of a change parser's changes, each once, in order (a rename names both). */
export function pathsOf(changes: ReadonlyArray<{ path: string }>): string[] {
  return [...new Set(changes.map((change) => change.path))];
}
