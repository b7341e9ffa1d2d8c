// Passthrough fuzzing (issue #6, part 1): generated streams mixing valid Claude events, garbage,
// CRLF, invalid UTF-8, empty and huge lines, cut at random chunk boundaries. The output must be
// byte-identical to the input every time, detection must never throw, and the valid events must
// still be detected whatever surrounds them.

import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, createAutoParser, type AgentParser, type FileChange } from "../../src/agents/index.js";
import { LineSplitter, type LineSink } from "../../src/stream/lines.js";
import { passthrough } from "../../src/stream/passthrough.js";
import { createWatcher } from "../../src/watcher/watcher.js";
import { runCli } from "../kit/cli.js";
import { captureReporter } from "../kit/sync.js";
import { SOAK, TIMEOUT_MS } from "./harness.js";

let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-fuzz-")));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// Stream generators

type Segment =
  | { kind: "garbage"; bytes: Uint8Array }
  /** A Write tool call; `result`: ok, is_error, or none (the stream is cut before it). */
  | { kind: "call"; id: number; path: string; absolute: boolean; result: "ok" | "error" | "none"; contentSize: number; wild: boolean };

interface Stream {
  init: boolean;
  segments: Segment[];
  /** Line terminator per line: "\n" or "\r\n". */
  crlf: boolean[];
  finalNewline: boolean;
  cuts: number[];
  slowReader: boolean;
}

const INVALID_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xa0, 0xa1],
  [0xe2, 0x28, 0xa1],
  [0xed, 0xa0, 0x80],
  [0xf0, 0x28, 0x8c, 0x28],
  [0xc0, 0xaf],
  [0x00],
];

const garbage: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...INVALID_UTF8), { maxLength: 20 }).map((parts) => Uint8Array.from(parts.flat())) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) }, // an empty line
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        "\r",
        "{",
        "}",
        '{"type":"assistant"',
        '{"type":"user","message":{"content":[{"type":"tool_result"',
        "null",
        "[]",
        '"x"',
      )
      .map((t) => Buffer.from(t)),
  },
  // Claude-shaped events with wrong field types: parsed, and must be ignored without a throw.
  {
    weight: 2,
    arbitrary: fc
      .record({
        id: fc.anything(),
        name: fc.constantFrom("Write", "Edit", "MultiEdit", "NotebookEdit", 7, null),
        input: fc.anything(),
        is_error: fc.anything(),
      })
      .map(({ id, name, input, is_error }) =>
        Buffer.from(
          JSON.stringify({ type: "assistant", session_id: "f", message: { content: [{ type: "tool_use", id, name, input }] } }) +
            "\n" +
            JSON.stringify({ type: "user", session_id: "f", message: { content: [{ type: "tool_result", tool_use_id: id, is_error }] } }),
        ),
      ),
  },
  // A huge line that is not an event.
  { weight: 1, arbitrary: fc.integer({ min: 64 * 1024, max: 1024 * 1024 }).map((size) => Buffer.alloc(size, 0x78)) },
);

const safeName = fc.stringMatching(/^[a-z0-9]{1,8}(\.[a-z]{1,3})?$/);
const wildPath = fc
  .oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.constantFrom("..", "../x", "/etc/passwd", "a\u0000b", "a\\b", ".git/config", "", ".", "/", "x".repeat(5000)),
  )
  .filter((p) => !p.includes("s/"));

const segment: fc.Arbitrary<Omit<Extract<Segment, { kind: "call" }>, "id"> | Extract<Segment, { kind: "garbage" }>> = fc.oneof(
  { weight: 3, arbitrary: garbage.map((bytes) => ({ kind: "garbage" as const, bytes })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("call" as const),
      path: fc.oneof(
        { weight: 4, arbitrary: fc.tuple(fc.constantFrom("s", "s/sub", "s/a/b"), safeName).map(([dir, name]) => `${dir}/${name}`) },
        { weight: 1, arbitrary: wildPath },
      ),
      absolute: fc.boolean(),
      result: fc.constantFrom("ok" as const, "ok" as const, "error" as const, "none" as const),
      // Mostly small contents; now and then one far over the parser's string limit.
      contentSize: fc.oneof(
        { weight: 6, arbitrary: fc.nat(200) },
        { weight: 1, arbitrary: fc.integer({ min: 20_000, max: 2 * 1024 * 1024 }) },
      ),
      wild: fc.constant(false),
    }),
  },
);

const streamArb = (maxSegments: number): fc.Arbitrary<Stream> =>
  fc
    .record({
      init: fc.boolean(),
      segments: fc.array(segment, { maxLength: maxSegments, size: "medium" }),
      crlf: fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
      finalNewline: fc.boolean(),
      cuts: fc.oneof(fc.array(fc.nat(), { maxLength: 60, size: "medium" }), fc.array(fc.nat(), { maxLength: 400, size: "large" })),
      slowReader: fc.boolean(),
    })
    .map((s) => ({
      ...s,
      segments: s.segments.map((seg, i) => (seg.kind === "call" ? { ...seg, id: i, wild: !/^s\//.test(seg.path) } : seg)),
    }));

interface Built {
  bytes: Buffer;
  chunks: Buffer[];
  /** Remote paths that must be detected: confirmed calls and calls whose result never came. */
  expected: Set<string>;
}

/**
 * A Write tool_use line whose content is `contentSize` "c"s: the same bytes as JSON.stringify of
 * the event, with the content (up to 2 MiB) laid in as bytes rather than stringified and encoded,
 * which was most of a run's time.
 */
function writeCall(id: string, filePath: string, contentSize: number): Buffer {
  const text = JSON.stringify({
    type: "assistant",
    session_id: "f",
    message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: filePath, content: "" } }] },
  });
  // content is the last key: nothing after it can hold these characters.
  const at = text.lastIndexOf('"content":""') + '"content":"'.length;
  return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.alloc(contentSize, "c"), Buffer.from(text.slice(at))]);
}

/** Lays the segments out as lines: each call's tool_use, then its result a few lines later. */
function build(stream: Stream): Built {
  const lines: Buffer[] = [];
  if (stream.init) lines.push(Buffer.from(JSON.stringify({ type: "system", subtype: "init", cwd: root, session_id: "f" })));
  const results: Buffer[] = [];
  const expected = new Set<string>();
  for (const seg of stream.segments) {
    if (seg.kind === "garbage") {
      lines.push(Buffer.from(seg.bytes));
    } else {
      const id = `toolu_fuzz_${seg.id}`;
      const filePath = seg.absolute && !seg.wild ? path.join(root, seg.path) : seg.path;
      lines.push(writeCall(id, filePath, seg.contentSize));
      if (seg.result !== "none") {
        results.push(
          Buffer.from(
            JSON.stringify({
              type: "user",
              session_id: "f",
              message: {
                content: [{ type: "tool_result", tool_use_id: id, content: "ok", ...(seg.result === "error" ? { is_error: true } : {}) }],
              },
            }),
          ),
        );
      }
      if (!seg.wild && seg.result !== "error") expected.add(seg.path);
    }
    // Results come after their calls, interleaved with what follows.
    if (results.length > 0 && lines.length % 2 === 0) lines.push(results.shift()!);
  }
  lines.push(...results);
  const parts: Buffer[] = [];
  lines.forEach((line, i) => {
    parts.push(line);
    const last = i === lines.length - 1;
    if (!last || stream.finalNewline) parts.push(Buffer.from(stream.crlf[i % stream.crlf.length] ? "\r\n" : "\n"));
  });
  const bytes = Buffer.concat(parts);
  const cuts = [...new Set(stream.cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) chunks.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return { bytes, chunks, expected };
}

/** The passthrough and the watcher in this process, with a reader that is sometimes slow. */
async function runInProcess(built: Built, slowReader: boolean) {
  // Each write is compared with the input where it lands, as it comes: the same check as keeping
  // a copy of every write and comparing their concatenation, without the copies.
  const written = { bytes: 0, identical: true };
  let writes = 0;
  const output = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      written.identical &&= chunk.equals(built.bytes.subarray(written.bytes, written.bytes + chunk.length));
      written.bytes += chunk.length;
      if (slowReader && ++writes % 3 === 0) setImmediate(callback);
      else callback();
    },
  });
  const log = captureReporter();
  // The agent runs in the project: relative paths without an init cwd are relative to it.
  const watcher = createWatcher({ root, agentCwd: root, agent: "claude", dryRun: true, fsWatch: false, report: log.reporter });
  await passthrough({ input: Readable.from(built.chunks), output, onChunk: (chunk) => watcher.write(chunk) }).done;
  const summary = await watcher.end();
  const detected = new Set(log.events("change").map((r) => String(r.path)));
  return { identical: written.identical && written.bytes === built.bytes.length, detected, summary, log };
}

const RUNS = SOAK ? 2000 : 200;

describe("passthrough fuzzing", { timeout: TIMEOUT_MS }, () => {
  it("in process: output is byte-identical, detection never throws and finds every valid event", async () => {
    await fc.assert(
      fc.asyncProperty(streamArb(40), async (stream) => {
        const built = build(stream);
        const { identical, detected, log } = await runInProcess(built, stream.slowReader);
        expect(identical).toBe(true);
        const safeDetected = new Set([...detected].filter((p) => p.startsWith("s/")));
        expect(safeDetected).toEqual(built.expected);
        expect(log.records.filter((r) => r.level === "error")).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it("every agent parser and auto-detection take arbitrary lines without throwing", () => {
    const keys = [
      "type",
      "subtype",
      "message",
      "content",
      "role",
      "id",
      "name",
      "input",
      "file_path",
      "notebook_path",
      "path",
      "tool_use_id",
      "is_error",
      "item",
      "items",
      "changes",
      "kind",
      "status",
      "tool_name",
      "tool_id",
      "parameters",
      "part",
      "tool",
      "state",
      "metadata",
      "files",
      "filePath",
      "movePath",
      "call_id",
      "args",
      "result",
      "success",
      "arguments",
      "output",
      "tool_calls",
      "function",
      "tool_call_id",
      "cwd",
      "session_id",
      "parent_tool_use_id",
      "writeToolCall",
      "editToolCall",
      "deleteToolCall",
      "apply_patch",
      "edits",
      "old_string",
      "new_string",
    ];
    const words = [
      ...keys,
      "assistant",
      "user",
      "system",
      "init",
      "tool_use",
      "tool_result",
      "Write",
      "Edit",
      "MultiEdit",
      "NotebookEdit",
      "item.completed",
      "file_change",
      "completed",
      "in_progress",
      "failed",
      "add",
      "update",
      "delete",
      "write_file",
      "replace",
      "edit",
      "write",
      "started",
      "function_call",
      "function_call_output",
      "editFile",
      "saveFile",
      "deleteFile",
      "moveFile",
      "WriteFile",
      "StrReplaceFile",
      "success",
      "error",
      "tool_call",
      "Failed",
      "a.txt",
      "../x",
      "/abs/x",
      "",
    ];
    const value = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constantFrom(...words),
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(fc.constantFrom(...keys), tie("value"), { maxKeys: 6 }),
      ),
    })).value;
    // Arguments as JSON strings too (acai, Kimi), and byte-level damage.
    const line = fc.oneof(
      value.map((v) => Buffer.from(JSON.stringify(v))),
      fc
        .dictionary(fc.constantFrom(...keys), value, { maxKeys: 6 })
        .map((v) => Buffer.from(JSON.stringify({ ...v, arguments: JSON.stringify(v) }))),
      fc.tuple(value, fc.nat(), fc.uint8Array({ maxLength: 4 })).map(([v, at, bytes]) => {
        const text = Buffer.from(JSON.stringify(v));
        const i = text.length ? at % text.length : 0;
        return Buffer.concat([text.subarray(0, i), bytes, text.subarray(i + 1)]);
      }),
    );
    // Each parser gets the lines whole, and again through the line splitter in random chunks
    // (long lines then reach it in pieces): it must never throw, and must find the same changes.
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 30 }), (lines, cutsAt) => {
        const stream = Buffer.concat(lines.flatMap((l) => [l, Buffer.from("\n")]));
        const cuts = [...new Set(cutsAt.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const formats: [string, (sink: (change: FileChange) => void) => AgentParser & Partial<LineSink>][] = [
          ...Object.entries(AGENTS).map(
            ([name, format]) =>
              [name, (sink: (change: FileChange) => void) => format.create(sink)] as [
                string,
                (sink: (change: FileChange) => void) => AgentParser,
              ],
          ),
          ["auto", (sink) => createAutoParser(sink, () => {})],
        ];
        for (const [name, create] of formats) {
          const whole: FileChange[] = [];
          const parser = create((change) => whole.push(change));
          for (const l of lines) parser.line(l);
          parser.end();
          for (const change of whole) {
            expect(typeof change.path).toBe("string");
            expect(["write", "delete"]).toContain(change.kind);
          }
          const chunked: FileChange[] = [];
          const again = create((change) => chunked.push(change));
          const splitter = new LineSplitter(again);
          let from = 0;
          for (const cut of [...cuts, stream.length]) {
            if (cut > from) splitter.push(stream.subarray(from, cut));
            from = Math.max(from, cut);
          }
          splitter.end();
          again.end();
          expect(chunked, `${name}: chunked input finds what whole lines find`).toEqual(whole);
        }
      }),
      { numRuns: SOAK ? 5000 : 300 },
    );
  });

  it("through the built CLI: stdout is stdin, byte for byte, and the exit code is 0", async () => {
    await fc.assert(
      fc.asyncProperty(streamArb(25), async (stream) => {
        const built = build(stream);
        const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", root], {
          input: built.chunks,
          timeoutMs: 60_000,
          cwd: root,
        });
        expect(result.stdout.equals(built.bytes)).toBe(true);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).not.toContain("internal error");
        for (const p of built.expected) expect(result.stderr).toContain(`would push ${p} (Write`);
      }),
      { numRuns: SOAK ? 100 : 10 },
    );
  });
});
