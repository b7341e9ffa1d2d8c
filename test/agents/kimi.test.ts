import { describe, expect, it } from "vitest";
import { kimi } from "../../src/agents/kimi.js";
import { run, write } from "../kit/agent-fixtures.js";

const calls = (...list: Array<[string, string, object]>) => ({
  role: "assistant",
  content: "",
  tool_calls: list.map(([id, name, args]) => ({ type: "function", id, function: { name, arguments: JSON.stringify(args) } })),
});
const tool = (id: string, content: unknown) => ({ role: "tool", tool_call_id: id, content });

describe("the Kimi parser", () => {
  it("reports WriteFile, StrReplaceFile and PatchFile once their tool message comes", () => {
    const lines = [
      calls(["t1", "WriteFile", { path: "/p/a", content: "x" }], ["t2", "StrReplaceFile", { path: "b.py", edit: { old: "1", new: "2" } }]),
      tool("t2", "<system>File successfully edited.</system>"),
      tool("t1", [{ type: "text", text: "<system>File successfully overwritten. Current size: 1 bytes.</system>" }]),
      calls(["t3", "PatchFile", { path: "/p/c", diff: "@@" }]),
      tool("t3", "<system>File successfully patched. Applied 1 hunk(s) to /p/c.</system>"),
    ];
    expect(run(kimi, lines)).toStrictEqual([write("b.py", "StrReplaceFile"), write("/p/a", "WriteFile"), write("/p/c", "PatchFile")]);
  });

  it("drops a call whose tool message is an error, old and new wording", () => {
    const lines = [
      calls(["t1", "WriteFile", { path: "/p/a", content: "x" }], ["t2", "WriteFile", { path: "/p/b", content: "y" }]),
      tool("t1", [{ type: "text", text: "<system>ERROR: `a` parent directory does not exist.</system>" }]),
      tool("t2", [
        { type: "text", text: "<system>ERROR</system>" },
        { type: "text", text: "<system>Failed to write</system>" },
      ]),
    ];
    expect(run(kimi, lines)).toStrictEqual([]);
  });

  it("reports a call without an answer as unconfirmed", () => {
    expect(run(kimi, [calls(["t1", "WriteFile", { path: "late.ts", content: "x" }])])).toStrictEqual([
      write("late.ts", "WriteFile", { confirmed: false }),
    ]);
  });

  it("reads the path of a WriteFile whose arguments hold a large file", () => {
    const content = "print('hi')\n".repeat(10_000);
    expect(run(kimi, [calls(["t1", "WriteFile", { content, path: "/p/big.py" }]), tool("t1", "<system>ok</system>")])).toStrictEqual([
      write("/p/big.py", "WriteFile"),
    ]);
  });

  it("ignores shell calls, plain messages and garbage", () => {
    const lines = [
      calls(["t1", "Shell", { command: "echo WriteFile > x" }]),
      tool("t1", "x"),
      { role: "assistant", content: "WriteFile tool_calls" },
      "}{",
    ];
    expect(run(kimi, lines)).toStrictEqual([]);
  });

  it("recognises its messages, which have a role and no type", () => {
    expect(kimi.detect({ role: "assistant", content: "Hello" })).toBe(true);
    expect(kimi.detect(tool("t1", "x"))).toBe(true);
    expect(kimi.detect({ type: "message", role: "assistant", content: "x" })).toBe(false);
  });
});
