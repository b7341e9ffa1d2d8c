import { describe, expect, it } from "vitest";
import { acai } from "../../src/agents/acai.js";
import { del, R, run, write } from "../kit/agent-fixtures.js";

const init = { type: "init", session_id: "550e8400-e29b-41d4-a716-446655440000", cwd: R, tools: ["saveFile"] };
const call = (id: string, name: string, args: object | string) => ({
  type: "function_call",
  id: `fc_${id}`,
  call_id: id,
  name,
  arguments: typeof args === "string" ? args : JSON.stringify(args),
});
const output = (id: string, text: string) => ({ type: "function_call_output", call_id: id, output: text });

describe("the acai parser", () => {
  it("reports saveFile and editFile on success, with the cwd of the init event", () => {
    const lines = [
      init,
      call("c1", "saveFile", { path: "a.ts", content: "x" }),
      output("c1", "File saved successfully: /w/a.ts"),
      call("c2", "editFile", { path: "b.ts", edits: [] }),
      output("c2", "Edited b.ts"),
    ];
    expect(run(acai, lines)).toStrictEqual([write("a.ts", "saveFile", { cwd: R }), write("b.ts", "editFile", { cwd: R })]);
  });

  it("drops a call whose output starts with Failed or Error, or reports a rejection", () => {
    const lines = [
      call("c1", "saveFile", { path: "a.ts", content: "x" }),
      output("c1", "Failed to save file: EACCES"),
      call("c2", "editFile", { path: "b.ts" }),
      output("c2", "Error: old text not found"),
      call("c3", "deleteFile", { path: "c.ts" }),
      output("c3", "The user rejected this deletion. Reason: no"),
    ];
    expect(run(acai, lines)).toStrictEqual([]);
  });

  it("reports an acai rename as a delete and a write", () => {
    expect(
      run(acai, [call("c1", "moveFile", { source: "a.ts", destination: "b.ts" }), output("c1", "Successfully moved a.ts to b.ts")]),
    ).toStrictEqual([del("a.ts", "moveFile"), write("b.ts", "moveFile")]);
  });

  it("reports unanswered calls as unconfirmed, deletes and moves included", () => {
    const lines = [call("c1", "deleteFile", { path: "a.ts" }), call("c2", "moveFile", { source: "b.ts", destination: "c.ts" })];
    expect(run(acai, lines)).toStrictEqual([
      del("a.ts", "deleteFile", { confirmed: false }),
      del("b.ts", "moveFile", { confirmed: false }),
      write("c.ts", "moveFile", { confirmed: false }),
    ]);
  });

  it("reads the path of a saveFile whose arguments hold a large file, before or after the content", () => {
    const content = 'line "one"\n\ttab \\ back ✓ é\n'.repeat(20_000);
    const lines = [
      call("c1", "saveFile", { path: "src/é ✓.ts", content, encoding: "utf-8" }),
      output("c1", "File saved successfully"),
      call("c2", "saveFile", { content, encoding: "utf-8", path: "src/after.ts" }),
      output("c2", "File saved successfully"),
      // What a Python or Rust serializer might write: non-ASCII as \u escapes, even surrogate pairs.
      call("c3", "saveFile", `{"path":"src/\\u00e9\\ud83d\\ude00.ts","content":${JSON.stringify(content)}}`),
      output("c3", "File saved successfully"),
    ];
    expect(run(acai, lines)).toStrictEqual([
      write("src/é ✓.ts", "saveFile"),
      write("src/after.ts", "saveFile"),
      write("src/é😀.ts", "saveFile"),
    ]);
  });

  it("reads a failure marker from a long output too", () => {
    const lines = [call("c1", "saveFile", { path: "a.ts", content: "x" }), output("c1", `Failed to save file: ${"x".repeat(40_000)}`)];
    expect(run(acai, lines)).toStrictEqual([]);
  });

  it("understands the Rust acai's Edit and Write tools", () => {
    const lines = [
      call("c1", "Edit", { path: "/p/a", edits: [] }),
      output("c1", "ok"),
      call("c2", "Write", { file_path: "/p/b", content: "x" }),
      output("c2", "ok"),
    ];
    expect(run(acai, lines)).toStrictEqual([write("/p/a", "Edit"), write("/p/b", "Write")]);
  });

  it("ignores other tools, broken arguments and unknown outputs", () => {
    const lines = [
      call("c1", "bash", { command: "rm -rf x" }),
      output("c1", "done"),
      call("c2", "saveFile", "{not json"),
      output("c2", "ok"),
      output("c9", "ok"),
    ];
    expect(run(acai, lines)).toStrictEqual([]);
  });

  it("recognises its init and function call events", () => {
    expect(acai.detect(init)).toBe(true);
    expect(acai.detect(call("c1", "saveFile", {}))).toBe(true);
    expect(acai.detect({ type: "init", timestamp: "t", session_id: "s", model: "m" })).toBe(false);
  });
});
