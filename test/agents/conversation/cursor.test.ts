import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const S = { session_id: "c6b62c6f" };
const call = (subtype: string, id: string | undefined, tool: object) => ({
  type: "tool_call",
  subtype,
  ...(id === undefined ? {} : { call_id: id }),
  tool_call: tool,
  ...S,
});

describe("the Cursor conversation reader", () => {
  it.each([
    [
      "the prompt and the agent's words, in Claude's shape",
      [
        { type: "user", message: { role: "user", content: [{ type: "text", text: "Bump it" }] }, ...S },
        { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "On it." }] }, ...S },
      ],
      ["prompt: Bump it", "text: On it."],
    ],
    [
      "a write, started then completed, with the path the result gives",
      [
        call("started", "c1", { writeToolCall: { args: { path: "s.txt", fileText: "x" } } }),
        call("completed", "c1", { writeToolCall: { args: { path: "s.txt", fileText: "x" }, result: { success: { path: "/p/s.txt" } } } }),
      ],
      ["tool write ok: s.txt [s.txt]"],
    ],
    [
      "a shell call by its command",
      [
        call("started", "c1", { shellToolCall: { args: { command: "npm test" } } }),
        call("completed", "c1", { shellToolCall: { args: { command: "npm test" }, result: { success: { exitCode: 0 } } } }),
      ],
      ["tool shell ok: npm test"],
    ],
    [
      "a failed edit with its reason",
      [
        call("started", "c1", { editToolCall: { args: { path: "m.ts" } } }),
        call("completed", "c1", { editToolCall: { args: { path: "m.ts" }, result: { error: { message: "File not found" } } } }),
      ],
      ["tool edit failed: m.ts [m.ts] (File not found)"],
    ],
    [
      "a rejected call fails",
      [call("completed", "c1", { deleteToolCall: { args: { path: "old.txt" }, result: { rejected: { reason: "" } } } })],
      ["tool delete failed: old.txt [old.txt] (rejected)"],
    ],
    [
      "a call whose id is in its args",
      [call("started", undefined, { readToolCall: { args: { path: "a", toolCallId: "t9" } } })],
      ["tool read running: a"],
    ],
    ["thinking is left out", [{ type: "thinking", subtype: "delta", text: "hmm", ...S }], []],
    ["the result", [{ type: "result", subtype: "success", is_error: false, result: "Bumped.", ...S }], ["result ok: Bumped."]],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("cursor", lines))).toEqual(expected);
  });
});
