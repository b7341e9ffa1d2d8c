import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const S = { timestamp: 1770499338052, sessionID: "ses_1" };
const tool = (callID: string, name: string, state: object) => ({
  type: "tool_use",
  ...S,
  part: { id: "p", type: "tool", callID, tool: name, state },
});

describe("the OpenCode conversation reader", () => {
  it.each([
    ["a text part", [{ type: "text", ...S, part: { type: "text", text: "Done." } }], ["text: Done."]],
    [
      "a finished call is one step",
      [tool("c1", "bash", { status: "completed", input: { command: "ls", description: "list" }, output: "a" })],
      ["tool bash ok: ls"],
    ],
    [
      "an edit with its file",
      [tool("c1", "edit", { status: "completed", input: { filePath: "/p/a.ts", oldString: "a", newString: "b" } })],
      ["tool edit ok: /p/a.ts [/p/a.ts]"],
    ],
    [
      "a failed edit with its error",
      [tool("c1", "edit", { status: "error", input: { filePath: "/p/m.ts" }, error: "Error: File /p/m.ts not found" })],
      ["tool edit failed: /p/m.ts [/p/m.ts] (Error: File /p/m.ts not found)"],
    ],
    [
      "a patch names what it did",
      [
        tool("c1", "apply_patch", {
          status: "completed",
          input: { patchText: "*** Begin Patch\n*** Delete File: /p/x\n*** End Patch" },
          metadata: { files: [{ filePath: "/p/a", type: "move", movePath: "/p/b" }] },
        }),
      ],
      ["tool apply_patch ok: /p/a, /p/b [/p/a, /p/b]"],
    ],
    [
      "a running call (if a version sends one), then its end",
      [
        tool("c1", "bash", { status: "running", input: { command: "sleep 1" } }),
        tool("c1", "bash", { status: "completed", input: { command: "sleep 1" } }),
      ],
      ["tool bash ok: sleep 1"],
    ],
    [
      "a step that stops the run ends it with the last words",
      [
        { type: "text", ...S, part: { type: "text", text: "Bye." } },
        { type: "step_finish", ...S, part: { type: "step-finish", reason: "tool-calls" } },
        { type: "step_finish", ...S, part: { type: "step-finish", reason: "stop" } },
      ],
      ["text: Bye.", "result ok: Bye."],
    ],
    [
      "an error event",
      [{ type: "error", ...S, error: { name: "APIError", data: { message: "Rate limit reached", statusCode: 429 } } }],
      ["result failed: Rate limit reached"],
    ],
    [
      "an error event with only a name",
      [{ type: "error", ...S, error: { name: "MessageAbortedError", data: {} } }],
      ["result failed: MessageAbortedError"],
    ],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("opencode", lines))).toEqual(expected);
  });
});
