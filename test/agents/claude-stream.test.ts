import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { amp } from "../../src/agents/amp.js";
import { HOLD_BYTES } from "../../src/agents/claude-shaped.js";
import { claude } from "../../src/agents/claude.js";
import { createAutoParser } from "../../src/agents/detect.js";
import { qwen } from "../../src/agents/qwen.js";
import type { AgentFormat, FileChange } from "../../src/agents/types.js";
import { LineSplitter } from "../../src/stream/lines.js";
import { pushInPlace } from "../kit/in-place.js";
import { fixture, run, write } from "../kit/agent-fixtures.js";

// The Claude parser reads lines in the pieces they arrive in, reads only the head of a tool call
// when nothing after it can matter, and skips what cannot matter unread. These tests hold it to
// what reading every line whole with JSON.parse would give.

const S = "8c1b2f4e-6d3a-4f0e-9b7c-2a5d8e1f3c90";
const assistant = (...content: object[]) => ({
  type: "assistant",
  message: { id: "msg_1", type: "message", role: "assistant", content },
  parent_tool_use_id: null,
  session_id: S,
});
const toolUse = (id: string, name: string, input: object) => ({ type: "tool_use", id, name, input });
const user = (...content: object[]) => ({ type: "user", message: { role: "user", content }, parent_tool_use_id: null, session_id: S });
const toolResult = (id: string, extra: object = {}) => ({ type: "tool_result", tool_use_id: id, content: "ok", ...extra });
const big = (bytes: number) => 'const s = "a \\"quoted\\" string"; // and a \\\\ backslash\n'.repeat(Math.ceil(bytes / 50)).slice(0, bytes);

/**
 * Everything `format`'s parser reports when the stream arrives in chunks of these sizes, each
 * overwritten once read, as stdin read in place does.
 */
function chunked(format: AgentFormat, lines: Array<string | object>, sizes: number[]): FileChange[] {
  const changes: FileChange[] = [];
  const parser = format.create((change) => changes.push(change));
  const splitter = new LineSplitter(parser);
  const bytes = Buffer.from(lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line)) + "\n").join(""));
  pushInPlace(bytes, sizes, (chunk) => splitter.push(chunk));
  splitter.end();
  parser.end();
  return changes;
}

/** The semantics, the slow and obvious way: every line whole, through JSON.parse. */
function reference(tools: Record<string, readonly string[]>, lines: string[]): FileChange[] {
  const changes: FileChange[] = [];
  const pending = new Map<string, Omit<FileChange, "confirmed">>();
  let cwd: string | undefined;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  const blocks = (event: Record<string, unknown>) =>
    isObject(event.message) && Array.isArray(event.message.content) ? (event.message.content as unknown[]).filter(isObject) : [];
  for (const line of lines) {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObject(event)) continue;
    if (event.type === "assistant") {
      for (const block of blocks(event)) {
        if (
          block.type !== "tool_use" ||
          typeof block.id !== "string" ||
          typeof block.name !== "string" ||
          !Object.hasOwn(tools, block.name) ||
          !isObject(block.input)
        )
          continue;
        const input = block.input;
        // (a path over 16 KiB is no path: the parser does not read strings that long)
        const path = tools[block.name]!.map((f) => input[f]).find(
          (v) => typeof v === "string" && v !== "" && Buffer.byteLength(v) <= 16 * 1024,
        );
        if (typeof path !== "string") continue;
        pending.delete(block.id);
        pending.set(
          block.id,
          cwd === undefined ? { path, kind: "write", cause: block.name } : { path, kind: "write", cause: block.name, cwd },
        );
      }
    } else if (event.type === "user") {
      for (const block of blocks(event)) {
        if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
        const call = pending.get(block.tool_use_id);
        pending.delete(block.tool_use_id);
        if (call && block.is_error !== true) changes.push({ ...call, confirmed: true });
      }
    } else if (event.type === "system" && event.subtype === "init" && typeof event.cwd === "string" && cwd === undefined) cwd = event.cwd;
  }
  for (const call of pending.values()) changes.push({ ...call, confirmed: false });
  return changes;
}

describe("the Claude parser, reading lines as they come", () => {
  it("finds a second tool call after a long string, in one piece or many", () => {
    const both = assistant(
      toolUse("a", "Write", { file_path: "/p/a.ts", content: big(200_000) }),
      toolUse("b", "Edit", { file_path: "/p/b.ts", old_string: "x", new_string: "y" }),
    );
    const lines = [both, user(toolResult("a"), toolResult("b"))];
    const expected = [write("/p/a.ts", "Write"), write("/p/b.ts", "Edit")];
    expect(run(claude, lines)).toStrictEqual(expected);
    for (const size of [1, 7, 100, 4096, 65536]) expect(chunked(claude, lines, [size])).toStrictEqual(expected);
  });

  it("finds a path that comes after the content", () => {
    const late = assistant(toolUse("a", "Write", { content: big(100_000), file_path: "/p/late.ts" }));
    const lines = [late, user(toolResult("a"))];
    expect(run(claude, lines)).toStrictEqual([write("/p/late.ts", "Write")]);
    expect(chunked(claude, lines, [1000])).toStrictEqual([write("/p/late.ts", "Write")]);
  });

  it("finds an id and a name that come after the input", () => {
    const reordered = assistant({ input: { file_path: "/p/a.ts", content: big(50_000) }, name: "Write", type: "tool_use", id: "a" });
    expect(chunked(claude, [reordered, user(toolResult("a"))], [333])).toStrictEqual([write("/p/a.ts", "Write")]);
  });

  it("is not fooled by a tool call quoted inside a file's content", () => {
    const quoted = JSON.stringify(assistant(toolUse("b", "Write", { file_path: "/p/quoted.ts" })));
    const line = assistant(toolUse("a", "Write", { file_path: "/p/a.ts", content: big(30_000) + quoted + big(30_000) }));
    const lines = [line, user(toolResult("a"), toolResult("b"))];
    expect(run(claude, lines)).toStrictEqual([write("/p/a.ts", "Write")]);
    expect(chunked(claude, lines, [4096])).toStrictEqual([write("/p/a.ts", "Write")]);
  });

  it("reads a tool call after a long text block of the same message", () => {
    const lines = [assistant({ type: "text", text: big(80_000) }, toolUse("a", "Edit", { file_path: "/p/a.ts" })), user(toolResult("a"))];
    expect(chunked(claude, lines, [65536])).toStrictEqual([write("/p/a.ts", "Edit")]);
  });

  it("drops a cut line, and one whose rest is not JSON", () => {
    const whole = JSON.stringify(assistant(toolUse("a", "Write", { file_path: "/p/a.ts", content: big(100_000) })));
    const lines = [whole.slice(0, 60_000), user(toolResult("a")), whole.slice(0, -1) + "x", user(toolResult("a"))];
    expect(run(claude, lines)).toStrictEqual([]);
    expect(chunked(claude, lines, [4000])).toStrictEqual([]);
  });

  it("sees an is_error that comes after a long result", () => {
    const lines = [
      assistant(toolUse("a", "Write", { file_path: "/p/a.ts" })),
      user(toolResult("a", { content: big(200_000), is_error: true })),
    ];
    expect(run(claude, lines)).toStrictEqual([]);
    expect(chunked(claude, lines, [5000])).toStrictEqual([]);
  });

  it("reads lines in another layout: spaces, keys in any order, type last", () => {
    const lines = [
      JSON.stringify({ cwd: "/w", subtype: "init", type: "system", session_id: S }, null, 1).replaceAll("\n", " "),
      JSON.stringify(
        { message: { content: [{ input: { file_path: "a.ts" }, id: "a", name: "Write", type: "tool_use" }] }, type: "assistant" },
        null,
        2,
      ).replaceAll("\n", ""),
      ` ${JSON.stringify(user(toolResult("a")))}\r`,
    ];
    const expected = [write("a.ts", "Write", { cwd: "/w" })];
    expect(run(claude, lines)).toStrictEqual(expected);
    expect(chunked(claude, lines, [3])).toStrictEqual(expected);
  });

  it("ignores tool calls in partial-message events and other event types", () => {
    const lines = [
      {
        type: "stream_event",
        event: { type: "content_block_start", content_block: toolUse("a", "Write", { file_path: "/p/a.ts" }) },
        session_id: S,
      },
      { type: "result", message: { content: [toolUse("b", "Write", { file_path: "/p/b.ts" })] } },
      user(toolResult("a"), toolResult("b")),
    ];
    expect(chunked(claude, lines, [10])).toStrictEqual([]);
  });

  it("prefers the first of a tool's path fields, whatever their order in the line", () => {
    const lines = [
      assistant(toolUse("a", "edit", { path: "/p/second.ts", content: big(20_000), file_path: "/p/first.ts" })),
      user(toolResult("a")),
    ];
    expect(run(qwen, lines)).toStrictEqual([write("/p/first.ts", "edit")]);
    expect(chunked(qwen, lines, [1024])).toStrictEqual([write("/p/first.ts", "edit")]);
    const ampLines = [assistant(toolUse("a", "create_file", { path: "/p/a.ts", content: big(20_000) })), user(toolResult("a"))];
    expect(chunked(amp, ampLines, [1024])).toStrictEqual([write("/p/a.ts", "create_file")]);
  });

  it(`reads on structurally once the rest of a line outgrows what it may hold (${HOLD_BYTES / 1024 / 1024} MiB)`, () => {
    const huge = assistant(
      toolUse("a", "Write", { file_path: "/p/huge.ts", content: big(HOLD_BYTES + 1_000_000) }),
      toolUse("b", "Write", { file_path: "/p/after.ts" }),
    );
    const lines = [huge, user(toolResult("a"), toolResult("b"))];
    expect(chunked(claude, lines, [65536])).toStrictEqual([write("/p/huge.ts", "Write"), write("/p/after.ts", "Write")]);
  });

  it("forgets a line the splitter gave up as too long", () => {
    const changes: FileChange[] = [];
    const parser = claude.create((change) => changes.push(change));
    const splitter = new LineSplitter(parser, { maxLineLength: 10_000 });
    const long = JSON.stringify(assistant(toolUse("a", "Write", { file_path: "/p/a.ts", content: big(20_000) })));
    const next = JSON.stringify(assistant(toolUse("b", "Write", { file_path: "/p/b.ts" })));
    const text = Buffer.from([long, next, JSON.stringify(user(toolResult("a"), toolResult("b")))].join("\n") + "\n");
    for (let at = 0; at < text.length; at += 1000) splitter.push(text.subarray(at, at + 1000));
    splitter.end();
    parser.end();
    expect(changes).toStrictEqual([write("/p/b.ts", "Write")]);
  });

  it("gives the recorded session's changes whatever the chunking", () => {
    const { session, expected } = fixture("claude");
    const lines = session.split("\n").filter((line) => line !== "");
    for (const size of [1, 2, 3, 17, 64, 1000, 65536]) expect(chunked(claude, lines, [size])).toStrictEqual(expected);
  });

  it("hands long lines to the detected parser in pieces under auto-detection", () => {
    const { session, expected } = fixture("claude");
    const changes: FileChange[] = [];
    const parser = createAutoParser(
      (change) => changes.push(change),
      () => {},
    );
    const splitter = new LineSplitter(parser);
    pushInPlace(Buffer.from(session), [97], (chunk) => splitter.push(chunk));
    splitter.end();
    parser.end();
    expect(changes).toStrictEqual(expected);
  });

  it("agrees with JSON.parse on random sessions, cut anywhere (property)", () => {
    const TOOLS = { Edit: ["file_path"], Write: ["file_path"], MultiEdit: ["file_path"], NotebookEdit: ["notebook_path"] };
    const id = fc.constantFrom("t1", "t2", "t3", 't\\"4');
    const name = fc.constantFrom("Edit", "Write", "Read", "NotebookEdit", "Bash", "MultiEdit");
    const text = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('"tool_use"', 'say "tool_use" \\', big(3000), "x".repeat(20_000)));
    const input = fc.record(
      {
        file_path: fc.constantFrom("/p/a.ts", "b.ts", "", "/p/ü ✓.ts"),
        notebook_path: fc.constant("/p/n.ipynb"),
        content: text,
        old_string: text,
      },
      { requiredKeys: [] },
    );
    const shuffled = <T extends object>(arb: fc.Arbitrary<T>) =>
      fc
        .tuple(arb, fc.nat())
        .map(([object, seed]) =>
          Object.fromEntries(Object.entries(object).sort((a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 31 + seed) % 7))),
        );
    const block = fc.oneof(
      shuffled(fc.record({ type: fc.constant("tool_use"), id, name, input })),
      fc.record({ type: fc.constant("text"), text }),
      shuffled(
        fc.record(
          { type: fc.constant("tool_result"), tool_use_id: id, content: text, is_error: fc.boolean() },
          { requiredKeys: ["type", "tool_use_id"] },
        ),
      ),
    );
    const event = fc.oneof(
      fc
        .record({
          type: fc.constantFrom("assistant", "user"),
          message: fc.record({ content: fc.array(block, { maxLength: 3 }) }),
          session_id: fc.constant(S),
        })
        .chain((e) => shuffled(fc.constant(e))),
      fc.constant({ type: "system", subtype: "init", cwd: "/w", session_id: S }),
      fc.record({ type: fc.constant("stream_event"), event: fc.record({ content_block: block }) }),
    );
    const line = fc.oneof(
      { weight: 8, arbitrary: event.map((e) => JSON.stringify(e)) },
      { weight: 1, arbitrary: fc.constantFrom("", "garbage {", "[1,2]", "null", "{") },
      // a line cut short (one ending in "}" could pass for whole: the parser trusts a line's end)
      {
        weight: 1,
        arbitrary: fc
          .tuple(event, fc.nat())
          .map(([e, at]) => JSON.stringify(e).slice(0, at % JSON.stringify(e).length))
          .filter((cut) => !cut.trimEnd().endsWith("}")),
      },
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 5 }),
        (lines, sizes) => {
          const expected = reference(TOOLS, lines);
          expect(run(claude, lines)).toStrictEqual(expected);
          expect(chunked(claude, lines, sizes)).toStrictEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
