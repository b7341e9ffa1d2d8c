import { describe, expect, it } from "vitest";
import { cursor } from "../../src/agents/cursor.js";
import { del, R, run, write } from "../kit/agent-fixtures.js";

const init = {
  type: "system",
  subtype: "init",
  apiKeySource: "login",
  cwd: R,
  session_id: "s",
  model: "Claude 4 Sonnet",
  permissionMode: "default",
};
const call = (subtype: string, id: string, key: string, body: object) => ({
  type: "tool_call",
  subtype,
  call_id: id,
  tool_call: { [key]: body },
  session_id: "s",
});

describe("the Cursor parser", () => {
  it("reports a write at the absolute path of its success, with the cwd of the init event", () => {
    const lines = [
      init,
      call("started", "c1", "writeToolCall", { args: { path: "a.txt", fileText: "x" } }),
      call("completed", "c1", "writeToolCall", { args: { path: "a.txt" }, result: { success: { path: `${R}/a.txt`, linesCreated: 1 } } }),
    ];
    expect(run(cursor, lines)).toStrictEqual([write(`${R}/a.txt`, "writeToolCall", { cwd: R })]);
  });

  it("falls back to the started path when the success has none", () => {
    const lines = [
      call("started", "c1", "editToolCall", { args: { path: "/p/a", streamContent: "x" } }),
      call("completed", "c1", "editToolCall", { args: {}, result: { success: { linesAdded: 1 } } }),
    ];
    expect(run(cursor, lines)).toStrictEqual([write("/p/a", "editToolCall")]);
  });

  it("reports a deletion", () => {
    const lines = [
      call("started", "c1", "deleteToolCall", { args: { path: "/p/a" } }),
      call("completed", "c1", "deleteToolCall", { args: { path: "/p/a" }, result: { success: {} } }),
    ];
    expect(run(cursor, lines)).toStrictEqual([del("/p/a", "deleteToolCall")]);
  });

  it("drops a call that completed without success", () => {
    const lines = [
      call("started", "c1", "editToolCall", { args: { path: "/p/a" } }),
      call("completed", "c1", "editToolCall", { args: { path: "/p/a" }, result: { error: { message: "File not found" } } }),
      call("started", "c2", "writeToolCall", { args: { path: "/p/b" } }),
      call("completed", "c2", "writeToolCall", { args: { path: "/p/b" }, result: { rejected: { reason: "user" } } }),
    ];
    expect(run(cursor, lines)).toStrictEqual([]);
  });

  it("reports a started delete that never completed as an unconfirmed delete", () => {
    expect(run(cursor, [init, call("started", "c1", "deleteToolCall", { args: { path: "old.txt" } })])).toStrictEqual([
      del("old.txt", "deleteToolCall", { confirmed: false, cwd: R }),
    ]);
  });

  it("reports a completion whose start it never saw", () => {
    expect(
      run(cursor, [call("completed", "c1", "writeToolCall", { args: { path: "a" }, result: { success: { path: "/p/a" } } })]),
    ).toStrictEqual([write("/p/a", "writeToolCall")]);
  });

  it("ignores reads, shell calls and other tools", () => {
    const lines = [
      call("started", "c1", "readToolCall", { args: { path: "/p/a" } }),
      call("completed", "c1", "readToolCall", { args: { path: "/p/a" }, result: { success: { content: "writeToolCall" } } }),
      call("completed", "c2", "shellToolCall", { args: { command: "rm x" }, result: { success: { exitCode: 0 } } }),
      call("completed", "c3", "function", { name: "writeToolCall", arguments: "{}" }),
    ];
    expect(run(cursor, lines)).toStrictEqual([]);
  });

  it("is told apart from Claude, whose init looks alike", () => {
    expect(cursor.detect(init)).toBe(true);
    expect(cursor.detect({ ...init, tools: ["Edit"], claude_code_version: "2.0.14", uuid: "u" })).toBe(false);
    expect(cursor.detect({ type: "tool_call", subtype: "started", call_id: "c1", tool_call: {} })).toBe(true);
  });
});
