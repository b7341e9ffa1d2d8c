import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const T = { timestamp: "2025-10-10T12:00:00.000Z" };
const message = (role: string, content: string, delta?: boolean) => ({
  type: "message",
  ...T,
  role,
  content,
  ...(delta === undefined ? {} : { delta }),
});
const toolUse = (id: string, name: string, parameters: object) => ({ type: "tool_use", ...T, tool_name: name, tool_id: id, parameters });
const toolResult = (id: string, status: string, extra: object = {}) => ({ type: "tool_result", ...T, tool_id: id, status, ...extra });

describe("the Gemini conversation reader", () => {
  it.each([
    ["the prompt", [message("user", "Fix it")], ["prompt: Fix it"]],
    [
      "delta pieces joined into one text, ended by the next event",
      [
        message("assistant", "I'll ", true),
        message("assistant", "fix it.", true),
        toolUse("r1", "read_file", { absolute_path: "/p/a.ts" }),
      ],
      ["text: I'll fix it.", "tool read_file running: /p/a.ts"],
    ],
    ["delta pieces ended by the end of input", [message("assistant", "Done", true), message("assistant", ".", true)], ["text: Done."]],
    ["a whole message", [message("assistant", "Done.")], ["text: Done."]],
    [
      "a write_file with its file",
      [toolUse("w1", "write_file", { file_path: "a.ts", content: "x" }), toolResult("w1", "success", { output: "ok" })],
      ["tool write_file ok: a.ts [a.ts]"],
    ],
    [
      "a shell command",
      [toolUse("s1", "run_shell_command", { command: "npm test", description: "tests" }), toolResult("s1", "success")],
      ["tool run_shell_command ok: npm test"],
    ],
    [
      "a failed call with its error",
      [
        toolUse("e1", "replace", { file_path: "m.ts" }),
        toolResult("e1", "error", { error: { type: "file_not_found", message: "File not found: m.ts" } }),
      ],
      ["tool replace failed: m.ts [m.ts] (File not found: m.ts)"],
    ],
    [
      "a success result carries the last words",
      [message("assistant", "All set."), { type: "result", ...T, status: "success", stats: {} }],
      ["text: All set.", "result ok: All set."],
    ],
    [
      "an error result",
      [{ type: "result", ...T, status: "error", error: { type: "FatalTurnLimitedError", message: "Reached max session turns" } }],
      ["result failed: Reached max session turns"],
    ],
    [
      "an error event, then the result with the same reason, said once",
      [
        { type: "error", ...T, severity: "error", message: "quota" },
        { type: "result", ...T, status: "error", error: { message: "quota" } },
      ],
      ["result failed: quota"],
    ],
    ["a warning is left out", [{ type: "error", ...T, severity: "warning", message: "Loop detected" }], []],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("gemini", lines))).toEqual(expected);
  });
});
