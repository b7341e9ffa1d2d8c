import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const S = { session_id: "832e2580", timestamp: 1795658348174 };
const call = (id: string, toolName: string, parameters: object) => ({
  type: "tool_call",
  id,
  messageId: "m",
  toolId: toolName,
  toolName,
  parameters,
  ...S,
});
const result = (id: string, toolId: string, extra: object) => ({ type: "tool_result", id, messageId: "m", toolId, ...extra, ...S });

describe("the Droid conversation reader", () => {
  it.each([
    [
      "the prompt and the agent's words",
      [
        { type: "message", role: "user", id: "u", text: "Go", ...S },
        { type: "message", role: "assistant", id: "a", text: "Done.", ...S },
      ],
      ["prompt: Go", "text: Done."],
    ],
    [
      "an Execute by its command",
      [call("t1", "Execute", { command: "rm doomed.txt" }), result("t1", "Execute", { isError: false, value: "" })],
      ["tool Execute ok: rm doomed.txt"],
    ],
    [
      "an Edit with its file, failed",
      [
        call("t1", "Edit", { file_path: "/p/a", old_str: "x", new_str: "y" }),
        result("t1", "Edit", { isError: true, error: { type: "tool_error", message: "Error: not found" } }),
      ],
      ["tool Edit failed: /p/a [/p/a] (Error: not found)"],
    ],
    [
      "a patch: the result lists what it wrote",
      [
        call("t1", "ApplyPatch", { input: "*** Begin Patch\n*** Update File: /p/old\n*** Move to: /p/new\n*** End Patch\n" }),
        result("t1", "ApplyPatch", {
          isError: false,
          value: JSON.stringify({ success: true, files: [{ file_path: "/p/old", display_operation: "update", moved_to: "/p/new" }] }),
        }),
      ],
      ["tool ApplyPatch ok: /p/old, /p/new [/p/old, /p/new]"],
    ],
    ["the completion", [{ type: "completion", finalText: "All done.", numTurns: 1, ...S }], ["result ok: All done."]],
    ["an error event", [{ type: "error", message: "Invalid API key", ...S }], ["result failed: Invalid API key"]],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("droid", lines))).toEqual(expected);
  });
});
