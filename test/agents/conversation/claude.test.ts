import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const SID = { session_id: "8c1b2f4e-6d3a-4f0e-9b7c-2a5d8e1f3c90" };
const assistant = (content: unknown, extra: object = {}) => ({
  type: "assistant",
  message: { role: "assistant", content },
  parent_tool_use_id: null,
  ...SID,
  ...extra,
});
const user = (content: unknown, extra: object = {}) => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  ...SID,
  ...extra,
});
const toolUse = (id: string | undefined, name: string, input: object) => ({
  type: "tool_use",
  ...(id === undefined ? {} : { id }),
  name,
  input,
});
const toolResult = (id: string | undefined, content: unknown, isError?: boolean) => ({
  type: "tool_result",
  ...(id === undefined ? {} : { tool_use_id: id }),
  content,
  ...(isError === undefined ? {} : { is_error: isError }),
});

describe("the Claude conversation reader", () => {
  it.each([
    ["a prompt as a string", [user("Fix the bug")], ["prompt: Fix the bug"]],
    [
      "a prompt as text blocks",
      [
        user([
          { type: "text", text: "Fix" },
          { type: "text", text: "it" },
        ]),
      ],
      ["prompt: Fix", "prompt: it"],
    ],
    [
      "text beside a result is not a prompt",
      [
        assistant([toolUse("t1", "Bash", { command: "sleep 99" })]),
        user([toolResult("t1", "interrupted", true), { type: "text", text: "[Request interrupted by user for tool use]" }]),
      ],
      ["tool Bash failed: sleep 99 (interrupted)"],
    ],
    [
      "text, thinking left out",
      [
        assistant([
          { type: "thinking", thinking: "hmm" },
          { type: "text", text: "Done." },
        ]),
      ],
      ["text: Done."],
    ],
    ["an empty text is no step", [assistant([{ type: "text", text: "  " }])], []],
    [
      "a Bash call by its command",
      [assistant([toolUse("t1", "Bash", { command: "npm test\nnpm run lint", description: "run" })]), user([toolResult("t1", "ok")])],
      ["tool Bash ok: npm test …"],
    ],
    [
      "a Write by its path, with its file",
      [assistant([toolUse("t1", "Write", { file_path: "a.ts", content: "x" })]), user([toolResult("t1", "done", false)])],
      ["tool Write ok: a.ts [a.ts]"],
    ],
    [
      "a Qwen write_file (Claude's table holds Qwen's tools)",
      [assistant([toolUse("t1", "write_file", { path: "q.ts", content: "x" })]), user([toolResult("t1", "ok")])],
      ["tool write_file ok: q.ts [q.ts]"],
    ],
    [
      "an Amp edit_file",
      [assistant([toolUse("t1", "edit_file", { path: "a.ts", old_str: "a", new_str: "b" })]), user([toolResult("t1", "ok")])],
      ["tool edit_file ok: a.ts [a.ts]"],
    ],
    [
      "a Grep by its pattern",
      [assistant([toolUse("t1", "Grep", { pattern: "TODO", path: "src" })]), user([toolResult("t1", "")])],
      ["tool Grep ok: TODO"],
    ],
    [
      "a failed call, tag stripped",
      [
        assistant([toolUse("t1", "Edit", { file_path: "m.ts" })]),
        user([toolResult("t1", "<tool_use_error>File does not exist.</tool_use_error>", true)]),
      ],
      ["tool Edit failed: m.ts [m.ts] (File does not exist.)"],
    ],
    [
      "a failure given as blocks",
      [assistant([toolUse("t1", "Bash", { command: "false" })]), user([toolResult("t1", [{ type: "text", text: "Exit code 1" }], true)])],
      ["tool Bash failed: false (Exit code 1)"],
    ],
    [
      "a sub-agent's calls, not its prompt or words",
      [
        assistant([toolUse("task", "Task", { description: "Docs", prompt: "Update README" })]),
        user([{ type: "text", text: "Update README" }], { parent_tool_use_id: "task" }),
        assistant([{ type: "text", text: "on it" }, toolUse("sub", "Edit", { file_path: "README.md" })], { parent_tool_use_id: "task" }),
        user([toolResult("sub", "ok")], { parent_tool_use_id: "task" }),
        user([toolResult("task", [{ type: "text", text: "Done" }])]),
      ],
      ["tool Task ok: Docs", "tool Edit ok: README.md [README.md]"],
    ],
    ["a success result", [{ type: "result", subtype: "success", is_error: false, result: "All done.", ...SID }], ["result ok: All done."]],
    [
      "an API error under success",
      [{ type: "result", subtype: "success", is_error: true, result: "API Error: 529 overloaded", ...SID }],
      ["result failed: API Error: 529 overloaded"],
    ],
    [
      "max turns, with the SDK's errors",
      [{ type: "result", subtype: "error_max_turns", is_error: true, errors: ["Reached maximum number of turns (3)"], ...SID }],
      ["result failed: Reached maximum number of turns (3)"],
    ],
    [
      "an error subtype alone",
      [{ type: "result", subtype: "error_during_execution", is_error: true, ...SID }],
      ["result failed: error_during_execution"],
    ],
    [
      "Amp's error string",
      [{ type: "result", subtype: "error_during_execution", is_error: true, error: "Interrupted", session_id: "T-019c479a-39cc" }],
      ["result failed: Interrupted"],
    ],
    [
      "Qwen's error object",
      [{ type: "result", subtype: "error_during_execution", is_error: true, error: { message: "Model stream ended" }, ...SID }],
      ["result failed: Model stream ended"],
    ],
    [
      "the same result twice in a row (a background agent's turn) is said once",
      [
        { type: "result", subtype: "success", is_error: false, result: "All done.", ...SID },
        { type: "result", subtype: "success", is_error: false, result: "All done.", ...SID },
      ],
      ["result ok: All done."],
    ],
    [
      "stream_event partials are left out",
      [{ type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "Do" } }, ...SID }],
      [],
    ],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("claude", lines))).toEqual(expected);
  });

  it("reports a call when it starts, and again with the same id when its result comes", () => {
    const steps = read("claude", [assistant([toolUse("t1", "Read", { file_path: "a.ts" })]), user([toolResult("t1", "x")])]);
    expect(steps).toEqual([
      { kind: "tool", id: "t1", name: "Read", summary: "a.ts", files: [], status: "running" },
      { kind: "tool", id: "t1", name: "Read", summary: "a.ts", files: [], status: "ok" },
    ]);
  });

  it("returns a call still running at the end as it is", () => {
    const steps = read("claude", [assistant([toolUse("t1", "Edit", { file_path: "a.ts" })])]);
    expect(steps.map((s) => s.kind === "tool" && s.status)).toEqual(["running", "running"]);
  });

  it("missing ids: a call gets one of its own and stays running; a result without one is left out", () => {
    const steps = read("claude", [assistant([toolUse(undefined, "Bash", { command: "ls" })]), user([toolResult(undefined, "x")])]);
    expect(steps).toEqual([
      { kind: "tool", id: "#1", name: "Bash", summary: "ls", files: [], status: "running" },
      { kind: "tool", id: "#1", name: "Bash", summary: "ls", files: [], status: "running" },
    ]);
  });

  it("a result before its call: reported at once, and the call then comes with that outcome, not running", () => {
    const steps = read("claude", [user([toolResult("t1", "boom", true)]), assistant([toolUse("t1", "Bash", { command: "make" })])]);
    expect(steps).toEqual([
      { kind: "tool", id: "t1", name: "", summary: "", files: [], status: "failed", error: "boom" },
      { kind: "tool", id: "t1", name: "Bash", summary: "make", files: [], status: "failed", error: "boom" },
    ]);
  });

  it("a huge Write keeps only its summary; a huge text is kept whole", () => {
    const content = "x".repeat(5 * 1024 * 1024);
    const text = "é".repeat(100_000) + "\n" + "z".repeat(100_000);
    const steps = read("claude", [assistant([{ type: "text", text }, toolUse("t1", "Write", { file_path: "big.txt", content })])]);
    expect(steps[0]).toEqual({ kind: "text", text });
    expect(steps[1]).toEqual({ kind: "tool", id: "t1", name: "Write", summary: "big.txt", files: ["big.txt"], status: "running" });
  });

  it("a long command is cut to one short line", () => {
    const [step] = read("claude", [assistant([toolUse("t1", "Bash", { command: "echo " + "a".repeat(1000) })])]);
    expect(step?.kind === "tool" && step.summary.length).toBe(200);
    expect(step?.kind === "tool" && step.summary.endsWith("…")).toBe(true);
  });
});
