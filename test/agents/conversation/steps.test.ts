import { describe, expect, it } from "vitest";
import { clip, contentText, reasonOf, summaryOf, textOf } from "../../../src/agents/conversation/steps.js";
import { parseEvent, SkippedString } from "../../../src/agents/sparse-json.js";

describe("summaryOf", () => {
  it.each([
    ["a command", { command: "npm test", description: "tests" }, [], "npm test"],
    ["an argv array", { command: ["bash", "-lc", "ls"] }, [], "bash -lc ls"],
    ["a path", { file_path: "a.ts", content: "x" }, ["a.ts"], "a.ts"],
    ["a pattern before its path", { pattern: "TODO", path: "src" }, [], "TODO"],
    ["a query", { query: "vitest docs" }, [], "vitest docs"],
    ["the first line only", { command: "a\nb" }, [], "a …"],
    ["a blank field is passed over", { command: "  ", path: "p" }, [], "p"],
    ["the files when no field tells", { input: "*** Begin Patch" }, ["a", "b"], "a, b"],
    ["a text input by its first line", "*** Begin Patch\n*** Add File: a", [], "*** Begin Patch …"],
    ["nothing", {}, [], ""],
    ["not an object", 42, [], ""],
  ])("%s", (_name, input, files, expected) => {
    expect(summaryOf(input, files)).toBe(expected);
  });
});

describe("clip", () => {
  it.each([
    ["short text as it is", "abc", 5, "abc"],
    ["cut with an ellipsis", "abcdefgh", 5, "abcd…"],
    ["never inside a surrogate pair", "ab😀cd", 4, "ab…"],
  ])("%s", (_name, text, max, expected) => {
    expect(clip(text, max)).toBe(expected);
  });
});

describe("textOf and contentText", () => {
  it("decodes a long string the sparse reader skipped, whole and unescaped", () => {
    const text = 'line "one"\n' + "é😀".repeat(20_000);
    const event = parseEvent(Buffer.from(JSON.stringify({ text })))!;
    expect(event.text).toBeInstanceOf(SkippedString);
    expect(textOf(event.text)).toBe(text);
  });

  it.each([
    ["a string", "hi", "hi"],
    [
      "text blocks joined, others left out",
      [
        { type: "text", text: "a" },
        { type: "thinking", thinking: "x" },
        { type: "text", text: "b" },
      ],
      "a\nb",
    ],
    ["no text blocks", [{ type: "image" }], undefined],
    ["not content", 5, undefined],
  ])("contentText of %s", (_name, content, expected) => {
    expect(contentText(content)).toBe(expected);
  });
});

describe("reasonOf", () => {
  it.each([
    ["a string", "boom", "boom"],
    ["an object's message", { type: "x", message: "boom" }, "boom"],
    ["OpenCode's nested data.message", { name: "APIError", data: { message: "rate" } }, "rate"],
    ["an empty string", "", undefined],
    ["nothing", undefined, undefined],
  ])("%s", (_name, value, expected) => {
    expect(reasonOf(value)).toBe(expected);
  });

  it("cuts a whole log to a bounded reason", () => {
    expect(reasonOf("x".repeat(100_000))!.length).toBe(2000);
  });
});

describe("a long string is decoded only as far as a summary or a reason shows", () => {
  it("a 20 MiB command: its summary, from its first bytes", () => {
    const event = parseEvent(Buffer.from(JSON.stringify({ command: "echo " + "é".repeat(10 * 1024 * 1024) })))!;
    const summary = summaryOf(event);
    expect(summary).toHaveLength(200);
    expect(summary).toBe("echo " + "é".repeat(194) + "…");
  });

  it("a 20 MiB failure output: its reason, from its first bytes", () => {
    const event = parseEvent(Buffer.from(JSON.stringify({ content: [{ type: "text", text: "😀".repeat(5 * 1024 * 1024) }] })))!;
    const reason = reasonOf(contentText(event.content, 2000))!;
    expect(reason).toBe("😀".repeat(999) + "…");
  });
});
