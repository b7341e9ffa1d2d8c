import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

let n = 0;
const ev = (type: string, data: object, extra: object = {}) => ({
  type,
  data,
  id: `e${++n}`,
  timestamp: "2026-11-26T01:57:35.369Z",
  parentId: null,
  ...extra,
});
const start = (id: string, toolName: string, args: unknown) => ev("tool.execution_start", { toolCallId: id, toolName, arguments: args });
const complete = (id: string, data: object) => ev("tool.execution_complete", { toolCallId: id, ...data });

describe("the Copilot conversation reader", () => {
  it.each([
    [
      "the prompt and the agent's words",
      [
        ev("user.message", { content: "Fix it" }),
        ev("assistant.message_delta", { deltaContent: "Do" }),
        ev("assistant.message", { content: "Done.", toolRequests: [] }),
      ],
      ["prompt: Fix it", "text: Done."],
    ],
    [
      "a create with its file",
      [
        start("c1", "create", { path: "/p/n.txt", file_text: "x" }),
        complete("c1", { success: true, fileEdits: [{ path: "/p/n.txt", kind: "create" }] }),
      ],
      ["tool create ok: /p/n.txt [/p/n.txt]"],
    ],
    [
      "a patch: its headers name the files, the result what it wrote",
      [
        start("c1", "apply_patch", "*** Begin Patch\n*** Update File: /p/a\n*** Add File: /p/b\n*** End Patch\n"),
        complete("c1", { success: false, error: { message: "ENOTDIR" }, fileEdits: [{ path: "/p/a", kind: "edit" }] }),
      ],
      ["tool apply_patch failed: /p/a, /p/b [/p/a] (ENOTDIR)"],
    ],
    [
      "a bash call by its command",
      [start("c1", "bash", { command: "rm doomed.txt", description: "delete" }), complete("c1", { success: true })],
      ["tool bash ok: rm doomed.txt"],
    ],
    [
      "a sub-agent's calls, not its prompt or words",
      [
        start("t", "task", { description: "write a file", prompt: "SCRIPT:sub" }),
        ev("user.message", { content: "SCRIPT:sub" }, { agentId: "a1" }),
        ev("assistant.message", { content: "All done.", parentToolCallId: "t" }, { agentId: "a1" }),
        start("s", "create", { path: "/p/s.txt" }),
        complete("s", { success: true }),
        complete("t", { success: true }),
      ],
      ["tool task ok: write a file", "tool create ok: /p/s.txt [/p/s.txt]"],
    ],
    [
      "the result, ok",
      [ev("assistant.message", { content: "Bye." }), { type: "result", timestamp: "t", sessionId: "s", exitCode: 0 }],
      ["text: Bye.", "result ok: Bye."],
    ],
    ["the result, failed", [{ type: "result", timestamp: "t", sessionId: "s", exitCode: 1 }], ["result failed: exit code 1"]],
    [
      "the result with an exit code that is not a number",
      [{ type: "result", timestamp: "t", sessionId: "s", exitCode: {} }],
      ["result failed: failed"],
    ],
    ["a session error", [ev("session.error", { errorType: "authentication", message: "Not logged in" })], ["result failed: Not logged in"]],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("copilot", lines))).toEqual(expected);
  });
});
