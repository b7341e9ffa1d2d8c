// What the sessions pages say of a session beyond its transcript's steps: its first prompt, the
// directory the agent ran in (to cut the agent machine's absolute paths to project paths), and a
// run's outcome in words rather than the agent's raw values.

import { createConversationReader } from "../../../agents/conversation/index.js";
import type { StoredBytes } from "../../store.js";
import { readBytes } from "../byte-pages.js";
import type { CommitSummary } from "../project-index.js";

export interface TranscriptHead {
  format: string | undefined;
  /** The first prompt, as the person wrote it. */
  prompt: string | undefined;
  /** The agent's working directory, where an event names it (Claude's init, Codex's session meta, …). */
  cwd: string | undefined;
}

/** The facts of a transcript's first `bytes` (a page in its middle may hold no telling event). */
export async function transcriptHead(transcript: StoredBytes, bytes: number): Promise<TranscriptHead> {
  const reader = createConversationReader();
  const head: TranscriptHead = { format: undefined, prompt: undefined, cwd: undefined };
  const lines = (await readBytes(transcript, 0, bytes)).toString("utf8").split("\n");
  // The last line may be cut by the read.
  if (transcript.size > bytes) lines.pop();
  for (const line of lines) {
    if (line === "") continue;
    head.cwd ??= cwdOf(line);
    const steps = reader.line(line);
    head.format ??= reader.format;
    head.prompt ??= steps.find((step) => step.kind === "prompt")?.text;
    if (head.format !== undefined && head.prompt !== undefined && head.cwd !== undefined) break;
  }
  return head;
}

/** A JSON event's working directory: its `cwd`, or its payload's (Codex). */
function cwdOf(line: string): string | undefined {
  if (!line.includes('"cwd"')) return undefined;
  try {
    const event = JSON.parse(line) as { cwd?: unknown; payload?: { cwd?: unknown } };
    const cwd = event.cwd ?? event.payload?.cwd;
    return typeof cwd === "string" && cwd.startsWith("/") ? cwd : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A path as the agent wrote it, as a path of the project: relative to the agent's directory, or
 * (no directory known) the longest tail of an absolute path that is one of the project's files.
 * Undefined when it is outside the project.
 */
export function projectPath(path: string, cwd: string | undefined, hasFile: (path: string) => boolean): string | undefined {
  if (!path.startsWith("/")) return normalized(path);
  if (cwd !== undefined) {
    const root = cwd.endsWith("/") ? cwd : `${cwd}/`;
    return path.startsWith(root) ? normalized(path.slice(root.length)) : undefined;
  }
  for (let at = path.indexOf("/", 1); at >= 0; at = path.indexOf("/", at + 1)) {
    if (hasFile(path.slice(at + 1))) return path.slice(at + 1);
  }
  return undefined;
}

/** A tool call's one-line summary with the agent's directory cut from the paths in it (`cd /root/x && make` → `cd x && make`). */
export function withoutRoot(text: string, cwd: string | undefined): string {
  if (cwd === undefined || cwd === "/") return text;
  const root = cwd.replace(/\/+$/, "");
  return text.replaceAll(`${root}/`, "").replaceAll(root, ".");
}

/** A relative path without "./" steps; undefined when it climbs out ("..") or is empty. */
function normalized(path: string): string | undefined {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  return parts.length === 0 || parts.includes("..") ? undefined : parts.join("/");
}

/** The last of a session's commits that carried `path` (what the session left it as). */
export function lastCommitOf(commits: readonly CommitSummary[], path: string): CommitSummary | undefined {
  return commits.findLast((commit) => commit.paths.includes(path));
}

/** The agents' raw outcome values, in words. */
const OUTCOMES: Readonly<Record<string, string>> = {
  success: "finished",
  error_during_execution: "failed while running",
  error_max_turns: "stopped: it reached the most turns it was allowed",
  error_max_budget_usd: "stopped: it reached its budget",
  error_max_structured_output_retries: "stopped: it could not produce the output asked for",
  failed: "failed",
};

/** A result's text in words when it is one of the known raw values; any other text as it is. */
export function outcomeWords(text: string): string {
  return OUTCOMES[text.trim()] ?? text;
}
