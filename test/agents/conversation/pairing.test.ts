import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

/**
 * For every format whose calls and results are separate events: a call and its failed result,
 * given in stream order, in reverse order (a result before its call), and without their ids.
 */
const S = { session_id: "8c1b2f4e", timestamp: "2025-10-10T12:00:00.000Z" };
const PAIRS: Record<string, { call: (id?: string) => object; failed: (id?: string) => object; name: string }> = {
  claude: {
    name: "Bash",
    call: (id) => ({
      type: "assistant",
      message: { role: "assistant", content: [{ type: "tool_use", ...(id && { id }), name: "Bash", input: { command: "make" } }] },
      ...S,
    }),
    failed: (id) => ({
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", ...(id && { tool_use_id: id }), content: "boom", is_error: true }] },
      ...S,
    }),
  },
  codex: {
    name: "command_execution",
    call: (id) => ({
      type: "item.started",
      item: { ...(id && { id }), type: "command_execution", command: "make", status: "in_progress" },
    }),
    failed: (id) => ({
      type: "item.completed",
      item: { ...(id && { id }), type: "command_execution", command: "make", exit_code: 1, status: "failed", error: { message: "boom" } },
    }),
  },
  gemini: {
    name: "run_shell_command",
    call: (id) => ({ type: "tool_use", ...S, tool_name: "run_shell_command", ...(id && { tool_id: id }), parameters: { command: "make" } }),
    failed: (id) => ({ type: "tool_result", ...S, ...(id && { tool_id: id }), status: "error", error: { message: "boom" } }),
  },
  cursor: {
    name: "shell",
    call: (id) => ({
      type: "tool_call",
      subtype: "started",
      ...(id && { call_id: id }),
      tool_call: { shellToolCall: { args: { command: "make" } } },
      ...S,
    }),
    failed: (id) => ({
      type: "tool_call",
      subtype: "completed",
      ...(id && { call_id: id }),
      tool_call: { shellToolCall: { args: { command: "make" }, result: { error: { message: "boom" } } } },
      ...S,
    }),
  },
  acai: {
    name: "bash",
    call: (id) => ({ type: "function_call", ...(id && { call_id: id }), name: "bash", arguments: JSON.stringify({ command: "make" }) }),
    failed: (id) => ({ type: "function_call_output", ...(id && { call_id: id }), output: "Error: boom" }),
  },
  kimi: {
    name: "Shell",
    call: (id) => ({
      role: "assistant",
      content: "",
      tool_calls: [{ type: "function", ...(id && { id }), function: { name: "Shell", arguments: JSON.stringify({ command: "make" }) } }],
    }),
    failed: (id) => ({ role: "tool", content: "<system>ERROR: boom</system>", ...(id && { tool_call_id: id }) }),
  },
  copilot: {
    name: "bash",
    call: (id) => ({
      type: "tool.execution_start",
      data: { ...(id && { toolCallId: id }), toolName: "bash", arguments: { command: "make" } },
      id: "e1",
    }),
    failed: (id) => ({
      type: "tool.execution_complete",
      data: { ...(id && { toolCallId: id }), success: false, error: { message: "boom" } },
      id: "e2",
    }),
  },
  droid: {
    name: "Execute",
    call: (id) => ({ type: "tool_call", ...(id && { id }), toolName: "Execute", parameters: { command: "make" }, ...S }),
    failed: (id) => ({ type: "tool_result", ...(id && { id }), toolId: "Execute", isError: true, error: { message: "boom" }, ...S }),
  },
};

describe.each(Object.entries(PAIRS))("%s: calls and results", (format, { call, failed, name }) => {
  const reason = (text: string) =>
    format === "kimi" ? text.replace("boom", "ERROR: boom") : format === "acai" ? "Error: boom" : format === "codex" ? "boom" : text;

  it("a failed call, in stream order: reported running, then failed with its reason", () => {
    const steps = read(format, [call("c1"), failed("c1")]);
    expect(steps.map((step) => step.kind === "tool" && step.status)).toEqual(["running", "failed"]);
    expect(digest(steps)).toEqual([`tool ${name} failed: make (${reason("boom")})`]);
  });

  it("a result before its call: reported at once, the call, when it comes, with its name and that outcome, and nothing left running", () => {
    const steps = read(format, [failed("c1"), call("c1")]);
    // Where the result repeats the call (Codex's item, Cursor's tool_call) its name is known at once.
    const first = ["codex", "cursor"].includes(format) ? name : "";
    expect(steps.map((step) => step.kind === "tool" && [step.name, step.status])).toEqual([
      [first, "failed"],
      [name, "failed"],
    ]);
  });

  it("missing ids: the call is reported (an id of its own) and stays running; the result cannot be paired", () => {
    const steps = read(format, [call(), failed()]);
    const ids = steps.map((step) => step.kind === "tool" && step.id);
    expect(ids.every((id) => typeof id === "string" && id !== "")).toBe(true);
    expect(digest(steps)[0]).toBe(`tool ${name} running: make`);
  });
});
