import { describe, expect, it } from "vitest";
import { gemini } from "../../src/agents/gemini.js";
import { run, write } from "../kit/agent-fixtures.js";

const ts = "2025-10-10T12:00:00.000Z";
const use = (id: string, name: string, parameters: object) => ({
  type: "tool_use",
  timestamp: ts,
  tool_name: name,
  tool_id: id,
  parameters,
});
const result = (id: string, status: string, extra: object = {}) => ({ type: "tool_result", timestamp: ts, tool_id: id, status, ...extra });

describe("the Gemini parser", () => {
  it("reports write_file and replace on a successful result", () => {
    const lines = [
      use("w1", "write_file", { file_path: "/p/a", content: "x" }),
      result("w1", "success"),
      use("r1", "replace", { file_path: "b.ts", old_string: "1", new_string: "2" }),
      result("r1", "success"),
    ];
    expect(run(gemini, lines)).toStrictEqual([write("/p/a", "write_file"), write("b.ts", "replace")]);
  });

  it("drops a call whose result is an error", () => {
    const lines = [
      use("r1", "replace", { file_path: "/p/a" }),
      result("r1", "error", { error: { type: "edit_no_occurrence_found", message: "0 occurrences" } }),
    ];
    expect(run(gemini, lines)).toStrictEqual([]);
  });

  it("drops a 'success' that carries an error", () => {
    expect(
      run(gemini, [use("w1", "write_file", { file_path: "/p/a" }), result("w1", "success", { error: { type: "x", message: "y" } })]),
    ).toStrictEqual([]);
  });

  it("reports a call whose result never came as unconfirmed", () => {
    expect(run(gemini, [use("w1", "write_file", { file_path: "/p/a" })])).toStrictEqual([
      write("/p/a", "write_file", { confirmed: false }),
    ]);
  });

  it("ignores reads, shell commands and results of unknown calls", () => {
    const lines = [
      use("x", "read_file", { absolute_path: "/p/a" }),
      result("x", "success"),
      use("y", "run_shell_command", { command: "rm /p/b" }),
      result("y", "success"),
      result("z", "success"),
    ];
    expect(run(gemini, lines)).toStrictEqual([]);
  });

  it("recognises its init, message and tool events, but not acai's init", () => {
    expect(gemini.detect({ type: "init", timestamp: ts, session_id: "s", model: "gemini-2.5-pro" })).toBe(true);
    expect(gemini.detect({ type: "message", timestamp: ts, role: "user", content: "hi" })).toBe(true);
    expect(gemini.detect(use("w1", "write_file", {}))).toBe(true);
    expect(gemini.detect({ type: "init", session_id: "s", cwd: "/p", tools: [] })).toBe(false);
  });
});
