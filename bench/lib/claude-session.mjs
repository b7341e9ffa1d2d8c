// Realistic Claude Code `--output-format stream-json --verbose` sessions for the benchmarks,
// generated deterministically. The event shapes and the mix of tools follow
// shared/bench/gen-claude-stream.mjs (the team's reference generator), so that the figures can be
// compared with the ones measured with it; this copy lives in the repository so that the bench
// needs nothing outside it. Differences: partial-message deltas (`stream_event`) are on by
// default, a few Read results are large (hundreds of KiB: lines that span many chunks), and code
// lines are drawn from a pool generated once, which makes 200 MiB take seconds instead of ten.
//
//   node bench/lib/claude-session.mjs --mb 200 --root /tmp/proj [--files 50] [--seed 1] [--no-partial] [--tool-use-result] > session.jsonl
//
// Shape: one system/init event, then turns of partial-message deltas, assistant text, a tool_use
// (Read, Bash, Grep, Edit, Write, MultiEdit, NotebookEdit) and its user tool_result, then a
// final result event. File-modifying tools target <root>/src/file<N>.ts (N < files) and
// <root>/notebooks/analysis<N>.ipynb.

import { closeSync, openSync, writeSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const SESSION_ID = "e8889acf-5473-49e2-bd81-4896717df7c7";
const MODEL = "claude-opus-4-1-20250805";
const WORDS = "the quick brown fox jumps over lazy dog function const return import export type interface async await".split(" ");
const USAGE = {
  input_tokens: 4,
  cache_creation_input_tokens: 5355,
  cache_read_input_tokens: 11292,
  output_tokens: 2,
  service_tier: "standard",
};

/** A seeded generator of the session's random parts (the reference generator's LCG). */
export function randomSource(seed = 1) {
  let state = seed;
  const rand = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const hex = (n) => {
    let s = "";
    for (let i = 0; i < n; i++) s += Math.floor(rand() * 16).toString(16);
    return s;
  };
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
  const text = (n) => {
    const words = [];
    for (let i = 0; i < n; i++) words.push(pick(WORDS));
    return words.join(" ");
  };
  // Source lines as the reference generator writes them: quotes to escape, non-ASCII, numbers.
  const pool = Array.from({ length: 4096 }, (_, i) => `  const v${i} = "${text(6)}"; // ünïcode ✓ ${i}`);
  const code = (lines) => {
    const out = [];
    for (let i = 0; i < lines; i++) out.push(pool[Math.floor(rand() * pool.length)]);
    return out.join("\n");
  };
  return { rand, pick, uuid, text, code };
}

/** Buffered writes to a file descriptor. */
function writer(fd) {
  let parts = [];
  let pending = 0;
  let written = 0;
  let lines = 0;
  const flush = () => {
    if (parts.length === 0) return;
    const buf = Buffer.from(parts.join(""));
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    parts = [];
    pending = 0;
  };
  return {
    emit(event) {
      const line = JSON.stringify(event) + "\n";
      written += Buffer.byteLength(line);
      lines++;
      parts.push(line);
      pending += line.length;
      if (pending > 1 << 20) flush();
    },
    flush,
    get bytes() {
      return written;
    },
    get lines() {
      return lines;
    },
  };
}

function events(out, r) {
  let msg = 0;
  return {
    init(root) {
      out.emit({
        type: "system",
        subtype: "init",
        cwd: root,
        session_id: SESSION_ID,
        tools: ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit"],
        mcp_servers: [],
        model: MODEL,
        permissionMode: "bypassPermissions",
        apiKeySource: "none",
        uuid: r.uuid(),
      });
    },
    assistant(content) {
      out.emit({
        type: "assistant",
        message: {
          id: `msg_${++msg}`,
          type: "message",
          role: "assistant",
          model: MODEL,
          content,
          stop_reason: null,
          stop_sequence: null,
          usage: USAGE,
        },
        parent_tool_use_id: null,
        session_id: SESSION_ID,
        uuid: r.uuid(),
      });
    },
    /** `detail`: Claude Code 2's `tool_use_result` after the message (what the tool did, in full). */
    toolResult(toolUseId, content, detail = undefined) {
      out.emit({
        type: "user",
        message: { role: "user", content: [{ tool_use_id: toolUseId, type: "tool_result", content }] },
        parent_tool_use_id: null,
        session_id: SESSION_ID,
        uuid: r.uuid(),
        ...(detail === undefined ? {} : { tool_use_result: detail }),
      });
    },
    delta(text) {
      out.emit({
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
        session_id: SESSION_ID,
        parent_tool_use_id: null,
        uuid: r.uuid(),
      });
    },
    result(turns) {
      out.emit({
        type: "result",
        subtype: "success",
        is_error: false,
        duration_ms: 18319,
        duration_api_ms: 21018,
        num_turns: turns,
        result: "Done.",
        session_id: SESSION_ID,
        total_cost_usd: 0.19,
        usage: USAGE,
        permission_denials: [],
        uuid: r.uuid(),
      });
    },
  };
}

/**
 * Writes a session of about `mb` MiB to `file`. Returns its size, its line count and the paths
 * of the files its tool calls change (each confirmed by a successful result). `toolUseResult`:
 * each user event also carries the `tool_use_result` Claude Code 2 writes after its message (a
 * read or written file's content, an edited file's original and its patch); off by default, the
 * shape of the team's reference generator.
 */
export function writeClaudeSession(
  file,
  { mb = 50, root = "/workspace/project", files = 50, seed = 1, partial = true, toolUseResult = false } = {},
) {
  const fd = typeof file === "number" ? file : openSync(file, "w");
  const out = writer(fd);
  const r = randomSource(seed);
  const ev = events(out, r);
  const target = mb * 1024 * 1024;
  const touched = new Set();
  const detail = toolUseResult ? (make) => make() : () => undefined;
  /** What Claude Code 2 says of an edit: the file before, and the patch. */
  const edited = (file, patch) => ({
    filePath: file,
    originalFile: r.code(50 + Math.floor(r.rand() * 400)),
    structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: patch }],
    userModified: false,
  });
  let id = 0;
  ev.init(root);
  while (out.bytes < target) {
    const file = `${root}/src/file${Math.floor(r.rand() * files)}.ts`;
    const tuid = `toolu_${String(++id).padStart(24, "0")}`;
    const x = r.rand();
    if (partial) for (let i = 0; i < 5; i++) ev.delta(r.text(4));
    ev.assistant([{ type: "text", text: r.text(20 + Math.floor(r.rand() * 60)) }]);
    if (x < 0.3) {
      ev.assistant([{ type: "tool_use", id: tuid, name: "Read", input: { file_path: file } }]);
      // Now and then a large file: a result of hundreds of KiB, over many chunks.
      const lines = r.rand() < 0.03 ? 2000 + Math.floor(r.rand() * 6000) : 20 + Math.floor(r.rand() * 200);
      const content = r.code(lines);
      ev.toolResult(
        tuid,
        content,
        detail(() => ({ type: "text", file: { filePath: file, content, numLines: lines, startLine: 1, totalLines: lines } })),
      );
    } else if (x < 0.5) {
      ev.assistant([{ type: "tool_use", id: tuid, name: "Bash", input: { command: `npm test -- ${r.text(2)}`, description: r.text(5) } }]);
      const stdout = r.code(10 + Math.floor(r.rand() * 100));
      ev.toolResult(
        tuid,
        stdout,
        detail(() => ({ stdout, stderr: "", interrupted: false, isImage: false })),
      );
    } else if (x < 0.6) {
      ev.assistant([{ type: "tool_use", id: tuid, name: "Grep", input: { pattern: r.pick(WORDS), path: root } }]);
      const filenames = Array.from({ length: 20 }, (_, i) => `${root}/src/file${i}.ts`);
      ev.toolResult(
        tuid,
        filenames.join("\n"),
        detail(() => ({ mode: "files_with_matches", filenames, numFiles: filenames.length })),
      );
    } else if (x < 0.8) {
      touched.add(file);
      const [oldString, newString] = [r.text(8), r.text(10)];
      ev.assistant([
        { type: "tool_use", id: tuid, name: "Edit", input: { file_path: file, old_string: oldString, new_string: newString } },
      ]);
      const said = `The file ${file} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${r.code(8)}`;
      ev.toolResult(
        tuid,
        said,
        detail(() => ({ ...edited(file, [`-${oldString}`, `+${newString}`]), oldString, newString, replaceAll: false })),
      );
    } else if (x < 0.9) {
      touched.add(file);
      const content = r.code(50 + Math.floor(r.rand() * 2000));
      ev.assistant([{ type: "tool_use", id: tuid, name: "Write", input: { file_path: file, content } }]);
      ev.toolResult(
        tuid,
        `File created successfully at: ${file}`,
        detail(() => ({ type: "create", filePath: file, content, structuredPatch: [], originalFile: null })),
      );
    } else if (x < 0.97) {
      touched.add(file);
      const edits = [
        { old_string: r.text(5), new_string: r.text(6) },
        { old_string: r.text(5), new_string: r.text(7), replace_all: true },
      ];
      ev.assistant([{ type: "tool_use", id: tuid, name: "MultiEdit", input: { file_path: file, edits } }]);
      ev.toolResult(
        tuid,
        `Applied 2 edits to ${file}`,
        detail(() => ({
          ...edited(
            file,
            edits.flatMap((e) => [`-${e.old_string}`, `+${e.new_string}`]),
          ),
          edits,
        })),
      );
    } else {
      const nb = `${root}/notebooks/analysis${Math.floor(r.rand() * 5)}.ipynb`;
      touched.add(nb);
      const source = r.code(5);
      ev.assistant([
        {
          type: "tool_use",
          id: tuid,
          name: "NotebookEdit",
          input: { notebook_path: nb, cell_id: "cell-1", new_source: source, edit_mode: "replace" },
        },
      ]);
      ev.toolResult(
        tuid,
        `Updated cell cell-1 with ${r.text(3)}`,
        detail(() => ({
          new_source: source,
          cell_id: "cell-1",
          cell_type: "code",
          language: "python",
          edit_mode: "replace",
          notebook_path: nb,
        })),
      );
    }
  }
  ev.result(id);
  out.flush();
  if (typeof file !== "number") closeSync(fd);
  return { bytes: out.bytes, lines: out.lines, touched: [...touched].sort() };
}

/**
 * A session whose one Write carries a file of `mib` MiB: one line of that size, then its result.
 * The content is written piece by piece, never held whole.
 */
export function writeBigLineSession(file, { mib = 64, root = "/workspace/project", seed = 2 } = {}) {
  const fd = openSync(file, "w");
  const out = writer(fd);
  const r = randomSource(seed);
  const ev = events(out, r);
  const path = `${root}/src/big.ts`;
  const id = "toolu_big0000000000000000001";
  ev.init(root);
  ev.assistant([{ type: "text", text: r.text(30) }]);
  out.flush();
  const head = JSON.stringify({
    type: "assistant",
    message: {
      id: "msg_big",
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [{ type: "tool_use", id, name: "Write", input: { file_path: path, content: "\u0000" } }],
      stop_reason: null,
      stop_sequence: null,
      usage: USAGE,
    },
    parent_tool_use_id: null,
    session_id: SESSION_ID,
    uuid: r.uuid(),
  });
  const [before, after] = head.split("\\u0000");
  let bytes = out.bytes;
  const put = (text) => {
    const buf = Buffer.from(text);
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    bytes += buf.length;
  };
  put(before);
  const target = mib * 1024 * 1024;
  let first = true;
  for (let contentBytes = 0; contentBytes < target;) {
    const piece = JSON.stringify((first ? "" : "\n") + r.code(2000)).slice(1, -1);
    first = false;
    put(piece);
    contentBytes += piece.length;
  }
  put(after + "\n");
  const rest = writer(fd);
  const ev2 = events(rest, r);
  ev2.toolResult(id, `File created successfully at: ${path}`);
  ev2.result(2);
  rest.flush();
  closeSync(fd);
  return { bytes: bytes + rest.bytes, lines: 5, touched: [path] };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const flag = (name, otherwise) => {
    const i = args.indexOf(`--${name}`);
    return i === -1 ? otherwise : args[i + 1];
  };
  const result = writeClaudeSession(1, {
    mb: Number(flag("mb", 50)),
    root: flag("root", "/workspace/project"),
    files: Number(flag("files", 50)),
    seed: Number(flag("seed", 1)),
    partial: !args.includes("--no-partial"),
    toolUseResult: args.includes("--tool-use-result"),
  });
  process.stderr.write(JSON.stringify(result) + "\n");
}
