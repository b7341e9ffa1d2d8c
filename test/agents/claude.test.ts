import { describe, expect, it } from "vitest";
import { amp } from "../../src/agents/amp.js";
import { claude } from "../../src/agents/claude.js";
import { qwen } from "../../src/agents/qwen.js";
import { R, run, write } from "../kit/agent-fixtures.js";

const S = "8c1b2f4e-6d3a-4f0e-9b7c-2a5d8e1f3c90";
const init = {
  type: "system",
  subtype: "init",
  cwd: R,
  session_id: S,
  tools: ["Edit"],
  mcp_servers: [],
  permissionMode: "default",
  claude_code_version: "2.0.14",
  uuid: "u0",
};
const use = (id: string, name: string, input: object, parent: string | null = null) => ({
  type: "assistant",
  message: { id: "msg_1", type: "message", role: "assistant", content: [{ type: "tool_use", id, name, input }] },
  parent_tool_use_id: parent,
  session_id: S,
  uuid: `u-${id}`,
});
const result = (id: string, extra: object = {}, parent: string | null = null) => ({
  type: "user",
  message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok", ...extra }] },
  parent_tool_use_id: parent,
  session_id: S,
  uuid: `r-${id}`,
});

describe("the Claude parser", () => {
  it("reports a write only once its result comes, with the cwd of the init event", () => {
    expect(run(claude, [init, use("t1", "Write", { file_path: `${R}/a.ts`, content: "x" })]).map((c) => c.confirmed)).toEqual([false]);
    expect(run(claude, [init, use("t1", "Write", { file_path: `${R}/a.ts`, content: "x" }), result("t1")])).toStrictEqual([
      write(`${R}/a.ts`, "Write", { cwd: R }),
    ]);
  });

  it("drops a call whose result is an error, such as a denied permission", () => {
    const denied = result("t1", {
      is_error: true,
      content: `Claude requested permissions to write to ${R}/a.ts, but you haven't granted it yet.`,
    });
    expect(run(claude, [init, use("t1", "Write", { file_path: `${R}/a.ts` }), denied])).toStrictEqual([]);
  });

  it("reports a call whose result never came as unconfirmed at the end", () => {
    expect(
      run(claude, [use("t1", "Edit", { file_path: "/p/a.ts" }), use("t2", "MultiEdit", { file_path: "/p/b.ts" }), result("t2")]),
    ).toStrictEqual([write("/p/b.ts", "MultiEdit"), write("/p/a.ts", "Edit", { confirmed: false })]);
  });

  it("counts sub-agent calls like any other", () => {
    const lines = [
      use("task", "Task", { prompt: "go" }),
      use("t1", "Edit", { file_path: "/p/a.ts" }, "task"),
      result("t1", {}, "task"),
      result("task"),
    ];
    expect(run(claude, lines)).toStrictEqual([write("/p/a.ts", "Edit")]);
  });

  it("reads the notebook path of NotebookEdit", () => {
    expect(run(claude, [use("t1", "NotebookEdit", { notebook_path: "/p/n.ipynb", new_source: "x" }), result("t1")])).toStrictEqual([
      write("/p/n.ipynb", "NotebookEdit"),
    ]);
  });

  it("ignores reads, shell commands, partial-message events and unknown tools", () => {
    const lines = [
      use("t1", "Read", { file_path: "/p/a.ts" }),
      result("t1"),
      use("t2", "Bash", { command: "touch /p/b.ts" }),
      result("t2"),
      {
        type: "stream_event",
        event: { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t3", name: "Edit", input: {} } },
        session_id: S,
      },
      result("t3"),
      use("t4", "FancyWrite", { file_path: "/p/c.ts" }),
      result("t4"),
    ];
    expect(run(claude, lines)).toStrictEqual([]);
  });

  it("ignores garbage, non-object JSON and empty lines", () => {
    const lines = [
      "garbage {",
      "[1,2]",
      '"text"',
      "null",
      "",
      "   ",
      "{",
      use("t1", "Write", { file_path: "/p/a.ts" }),
      "}}",
      result("t1"),
    ];
    expect(run(claude, lines)).toStrictEqual([write("/p/a.ts", "Write")]);
  });

  it("reports a call once even if its result is repeated", () => {
    expect(run(claude, [use("t1", "Write", { file_path: "/p/a.ts" }), result("t1"), result("t1")])).toStrictEqual([
      write("/p/a.ts", "Write"),
    ]);
  });

  it("reports several calls of one message and their results in one event", () => {
    const both = {
      type: "assistant",
      message: {
        role: "assistant",
        content: [
          { type: "tool_use", id: "a", name: "Write", input: { file_path: "/p/a" } },
          { type: "text", text: "and" },
          { type: "tool_use", id: "b", name: "Edit", input: { file_path: "/p/b" } },
        ],
      },
      session_id: S,
    };
    const results = {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "b", content: "ok" },
          { type: "tool_result", tool_use_id: "a", content: "ok" },
        ],
      },
      session_id: S,
    };
    expect(run(claude, [both, results])).toStrictEqual([write("/p/b", "Edit"), write("/p/a", "Write")]);
  });

  it("finds the path of a Write whose content is far longer than the string limit", () => {
    const big = "x".repeat(200_000);
    expect(run(claude, [use("t1", "Write", { content: big, file_path: "/p/big.ts" }), result("t1", { content: big })])).toStrictEqual([
      write("/p/big.ts", "Write"),
    ]);
  });

  it("reads a tool name written with JSON escapes (in the name or its key), or with spaces around its colon", () => {
    const line = (id: string, name: string, from: string, to: string) =>
      JSON.stringify(use(id, name, { file_path: `/p/${id}.ts` })).replace(from, to);
    const lines = [
      line("t1", "Write", '"name":"Write"', '"name":"Wr\\u0069te"'),
      line("t2", "Write", '"name":"Write"', '"n\\u0061me":"Write"'),
      line("t3", "Edit", '"name":"Edit"', '"name" : "Edit"'),
    ];
    expect(run(claude, [...lines, result("t1"), result("t2"), result("t3")])).toStrictEqual([
      write("/p/t1.ts", "Write"),
      write("/p/t2.ts", "Write"),
      write("/p/t3.ts", "Edit"),
    ]);
  });

  it("does not count a tool_use that only appears inside a string", () => {
    const quoted = {
      type: "user",
      message: {
        role: "user",
        content: [{ type: "text", text: '{"type":"tool_use","id":"t9","name":"Write","input":{"file_path":"/p/x"}}' }],
      },
      session_id: S,
    };
    expect(run(claude, [quoted, result("t9")])).toStrictEqual([]);
  });

  it("is told apart from Qwen and Amp, whose streams look the same", () => {
    expect(claude.detect(init)).toBe(true);
    expect(qwen.detect(init)).toBe(false);
    expect(amp.detect(init)).toBe(false);
  });
});

describe("the Qwen parser", () => {
  const qwenInit = {
    type: "system",
    subtype: "init",
    uuid: S,
    session_id: S,
    cwd: R,
    tools: [],
    permission_mode: "yolo",
    qwen_code_version: "0.14.0",
  };

  it("reports write_file, edit and replace, reading file_path or path", () => {
    const lines = [
      qwenInit,
      use("a", "write_file", { file_path: "/p/a" }),
      result("a"),
      use("b", "edit", { path: "/p/b" }),
      result("b"),
      use("c", "replace", { file_path: "/p/c" }),
      result("c"),
    ];
    expect(run(qwen, lines)).toStrictEqual([
      write("/p/a", "write_file", { cwd: R }),
      write("/p/b", "edit", { cwd: R }),
      write("/p/c", "replace", { cwd: R }),
    ]);
  });

  it("ignores Claude's tool names", () => {
    expect(run(qwen, [use("a", "Write", { file_path: "/p/a" }), result("a")])).toStrictEqual([]);
  });

  it("recognises its init event", () => {
    expect(qwen.detect(qwenInit)).toBe(true);
    expect(qwen.detect({ ...qwenInit, qwen_code_version: undefined })).toBe(true); // permission_mode alone
  });
});

describe("the Amp parser", () => {
  const T = "T-2775dc92-90ed-4f85-8b73-8f9766029e83";

  it("reports create_file and edit_file by their path", () => {
    const lines = [
      use("a", "create_file", { path: "/p/a", content: "x" }),
      result("a"),
      use("b", "edit_file", { path: "/p/b", old_str: "1", new_str: "2" }),
      result("b", { is_error: true }),
    ];
    expect(run(amp, lines)).toStrictEqual([write("/p/a", "create_file")]);
  });

  it("recognises a thread id as its session id", () => {
    expect(amp.detect({ type: "system", subtype: "init", cwd: R, session_id: T, tools: [] })).toBe(true);
    expect(amp.detect({ type: "assistant", session_id: S })).toBe(false);
  });
});
