import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const call = (id: string, name: string, args: object) => ({
  type: "function_call",
  id: `fc_${id}`,
  call_id: id,
  name,
  arguments: JSON.stringify(args),
});
const output = (id: string, text: string) => ({ type: "function_call_output", call_id: id, output: text });

describe("the acai conversation reader", () => {
  it.each([
    [
      "the prompt and the agent's words",
      [
        { type: "message", role: "user", content: "Add a util" },
        { type: "message", role: "assistant", content: "Done." },
      ],
      ["prompt: Add a util", "text: Done."],
    ],
    ["reasoning is left out", [{ type: "reasoning", id: "rs", summary: ["thinking"] }], []],
    [
      "a save with its file",
      [call("c1", "saveFile", { path: "u.ts", content: "x" }), output("c1", "File saved successfully: /p/u.ts")],
      ["tool saveFile ok: u.ts [u.ts]"],
    ],
    [
      "a move names both files",
      [call("c1", "moveFile", { source: "a.ts", destination: "b.ts" }), output("c1", "Successfully moved")],
      ["tool moveFile ok: a.ts [a.ts, b.ts]"],
    ],
    ["a bash call by its command", [call("c1", "bash", { command: "ls -la" }), output("c1", "total 0")], ["tool bash ok: ls -la"]],
    [
      "a failure by how its output starts",
      [call("c1", "editFile", { path: "m.ts" }), output("c1", "Failed to edit file: File not found")],
      ["tool editFile failed: m.ts [m.ts] (Failed to edit file: File not found)"],
    ],
    [
      "a rejected call",
      [call("c1", "bash", { command: "rm -rf /" }), output("c1", "The user rejected this tool call")],
      ["tool bash failed: rm -rf / (The user rejected this tool call)"],
    ],
    ["an error event", [{ type: "error", message: "API key invalid" }], ["result failed: API key invalid"]],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("acai", lines))).toEqual(expected);
  });

  it("a saveFile of a huge file: its arguments are not kept, the path is found", () => {
    const steps = read("acai", [call("c1", "saveFile", { path: "big.txt", content: "y".repeat(3 * 1024 * 1024) })]);
    expect(digest(steps)).toEqual(["tool saveFile running: big.txt [big.txt]"]);
  });
});
