import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const call = (id: string, name: string, args: object) => ({ type: "function", id, function: { name, arguments: JSON.stringify(args) } });

describe("the Kimi conversation reader", () => {
  it.each([
    [
      "words as a string, then calls",
      [{ role: "assistant", content: "Now the helper.", tool_calls: [call("t1", "WriteFile", { path: "u.ts", content: "x" })] }],
      ["text: Now the helper.", "tool WriteFile running: u.ts [u.ts]"],
    ],
    [
      "words as parts, thinking left out",
      [
        {
          role: "assistant",
          content: [
            { type: "think", think: "hmm" },
            { type: "text", text: "Looking." },
          ],
        },
      ],
      ["text: Looking."],
    ],
    [
      "a shell call by its command",
      [
        { role: "assistant", content: "", tool_calls: [call("t1", "Shell", { command: "ls" })] },
        { role: "tool", content: "a\nb", tool_call_id: "t1" },
      ],
      ["tool Shell ok: ls"],
    ],
    [
      "a failure, its tag dropped",
      [
        { role: "assistant", content: "", tool_calls: [call("t1", "StrReplaceFile", { path: "a.ts" })] },
        { role: "tool", content: [{ type: "text", text: "<system>ERROR: No replacements were made.</system>" }], tool_call_id: "t1" },
      ],
      ["tool StrReplaceFile failed: a.ts [a.ts] (ERROR: No replacements were made.)"],
    ],
    ["a user message is the prompt", [{ role: "user", content: "Fix it" }], ["prompt: Fix it"]],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("kimi", lines))).toEqual(expected);
  });
});
