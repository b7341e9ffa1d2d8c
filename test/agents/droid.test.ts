import { describe, expect, it } from "vitest";
import { droid } from "../../src/agents/droid.js";
import { del, run, write } from "../kit/agent-fixtures.js";

/** Factory Droid 0.215.0's events, as a real run wrote them (extra fields trimmed). */
const S = "7b6f7719-1e95-4681-b9b0-4387d58f9c0b";
const init = {
  type: "system",
  subtype: "init",
  cwd: "/p",
  session_id: S,
  tools: ["Read", "Edit", "Create", "ApplyPatch"],
  model: "custom:Mock-0",
  reasoning_effort: "off",
};
const call = (id: string, toolName: string, parameters: object) => ({
  type: "tool_call",
  id,
  messageId: "m",
  toolId: toolName,
  toolName,
  parameters,
  timestamp: 1,
  session_id: S,
});
const result = (id: string, value: unknown) => ({
  type: "tool_result",
  id,
  messageId: "m",
  isError: false,
  value: JSON.stringify(value),
  timestamp: 1,
  session_id: S,
});
const failure = (id: string, message: string) => ({
  type: "tool_result",
  id,
  messageId: "m",
  isError: true,
  error: { type: "tool_error", message },
  timestamp: 1,
  session_id: S,
});

const patch = (...lines: string[]) => ({ input: ["*** Begin Patch", ...lines, "*** End Patch", ""].join("\n") });
const C = { cwd: "/p" };

describe("the Droid parser", () => {
  it("reports Create and Edit by file_path once their result is not an error, relative to the init's cwd", () => {
    const lines = [
      init,
      call("t1", "Create", { file_path: "new.txt", content: "x" }),
      result("t1", { success: true, file_path: "/p/new.txt" }),
      call("t2", "Edit", { file_path: "/p/e.txt", old_str: "a", new_str: "b" }),
      failure("t2", "Error: The text to replace was not found in the file."),
      call("t3", "Execute", { command: "rm x" }),
      result("t3", "Command completed successfully"),
    ];
    expect(run(droid, lines)).toStrictEqual([write("new.txt", "Create", C)]);
  });

  it("reports what ApplyPatch's result lists: an update, a move as a delete and a write, a delete", () => {
    const files = [
      { file_path: "/p/a.txt", display_operation: "update", diff: "…" },
      { file_path: "/p/old.txt", display_operation: "update", moved_to: "/p/new.txt" },
      { file_path: "/p/gone.txt", display_operation: "delete" },
    ];
    const lines = [init, call("t1", "ApplyPatch", patch("*** Update File: /p/a.txt")), result("t1", { success: true, files })];
    expect(run(droid, lines)).toStrictEqual([
      write("/p/a.txt", "ApplyPatch", C),
      del("/p/old.txt", "ApplyPatch", C),
      write("/p/new.txt", "ApplyPatch", C),
      del("/p/gone.txt", "ApplyPatch", C),
    ]);
  });

  it("reports the headers of a failed patch unconfirmed (its first files may be written), and of one whose result lists nothing confirmed", () => {
    const lines = [
      init,
      call("t1", "ApplyPatch", patch("*** Update File: /p/half.txt", "@@", "-1", "+2", "*** Add File: /p/f.txt/inner.txt", "+x")),
      failure("t1", "Error: ENOTDIR: not a directory"),
      call("t2", "ApplyPatch", patch("*** Add File: /p/n.txt", "+x")),
      result("t2", { success: true }),
    ];
    expect(run(droid, lines)).toStrictEqual([
      write("/p/half.txt", "ApplyPatch", { ...C, confirmed: false }),
      write("/p/f.txt/inner.txt", "ApplyPatch", { ...C, confirmed: false }),
      write("/p/n.txt", "ApplyPatch", C),
    ]);
  });

  it("pairs parallel calls by id, and reports a call without result unconfirmed at the end", () => {
    const lines = [
      init,
      call("t1", "Edit", { file_path: "/p/one.txt" }),
      call("t2", "Create", { file_path: "/p/two.txt" }),
      result("t2", { success: true }),
      result("t1", { success: true }),
      call("t3", "Create", { file_path: "/p/never.txt" }),
    ];
    expect(run(droid, lines)).toStrictEqual([
      write("/p/two.txt", "Create", C),
      write("/p/one.txt", "Edit", C),
      write("/p/never.txt", "Create", { ...C, confirmed: false }),
    ]);
  });

  it("finds a result whose value mentions tool_call, and is not fooled by a message that quotes an event", () => {
    const lines = [
      init,
      call("t1", "Create", { file_path: "/p/a.txt", content: '{"type":"tool_call"}' }),
      { ...result("t1", { success: true }), note: "tool_call" },
      { type: "message", role: "assistant", id: "m", text: '{"type":"tool_result","id":"t9","isError":false}', session_id: S },
    ];
    expect(run(droid, lines)).toStrictEqual([write("/p/a.txt", "Create", C)]);
  });
});

describe("Droid's detection", () => {
  it("knows its init by reasoning_effort, and its own event types without one", () => {
    expect(droid.detect(init)).toBe(true);
    expect(droid.detect({ ...init, reasoning_effort: undefined, claude_code_version: "2.1.330" })).toBe(false);
    expect(droid.detect(call("t1", "Create", {}))).toBe(true);
    expect(droid.detect(failure("t1", "x"))).toBe(true);
    expect(droid.detect({ type: "completion", finalText: "", numTurns: 1, session_id: S })).toBe(true);
    // Cursor's tool_call events (subtype, no toolName) and Claude's messages are not Droid's.
    expect(droid.detect({ type: "tool_call", subtype: "started", call_id: "c", tool_call: {} })).toBe(false);
    expect(droid.detect({ type: "assistant", message: { content: [] }, session_id: S })).toBe(false);
  });
});
