import { describe, expect, it } from "vitest";
import { opencode } from "../../src/agents/opencode.js";
import { createAutoParser } from "../../src/agents/detect.js";
import type { FileChange } from "../../src/agents/types.js";
import { del, feed, fixture, run, write } from "../kit/agent-fixtures.js";

const tool = (name: string, state: object) => ({
  type: "tool_use",
  timestamp: 1770499345000,
  sessionID: "ses_1",
  part: { id: "prt_1", sessionID: "ses_1", messageID: "msg_1", type: "tool", callID: "call_1", tool: name, state },
});

describe("the OpenCode parser", () => {
  it("reports edit, write and multiedit by their filePath once completed", () => {
    const lines = [
      tool("edit", {
        status: "completed",
        input: { filePath: "/p/a", oldString: "1", newString: "2" },
        output: "Edit applied successfully.",
      }),
      tool("write", { status: "completed", input: { filePath: "/p/b", content: "x" } }),
      tool("multiedit", { status: "completed", input: { filePath: "/p/c", edits: [] } }),
    ];
    expect(run(opencode, lines)).toStrictEqual([write("/p/a", "edit"), write("/p/b", "write"), write("/p/c", "multiedit")]);
  });

  it("drops a tool call that ended in an error", () => {
    expect(
      run(opencode, [tool("edit", { status: "error", input: { filePath: "/p/a" }, error: "Error: oldString not found" })]),
    ).toStrictEqual([]);
  });

  it("reports every file in the input of an apply_patch that errored as unconfirmed, since its first files may be written", () => {
    const patchText = [
      "*** Begin Patch",
      "*** Update File: a.txt",
      "@@",
      "-1",
      "+2",
      "*** Add File: new.txt",
      "+x",
      "*** Update File: old.txt",
      "*** Move to: moved.txt",
      "*** Delete File: gone.txt",
      "*** End Patch",
    ].join("\n");
    const error = "Error: apply_patch verification failed: Failed to find expected lines in b.txt";
    expect(run(opencode, [tool("apply_patch", { status: "error", input: { patchText }, error })])).toStrictEqual([
      write("a.txt", "apply_patch", { confirmed: false }),
      write("new.txt", "apply_patch", { confirmed: false }),
      del("old.txt", "apply_patch", { confirmed: false }),
      write("moved.txt", "apply_patch", { confirmed: false }),
      del("gone.txt", "apply_patch", { confirmed: false }),
    ]);
  });

  it("reports an apply_patch rename as a delete and a write", () => {
    const files = [
      { filePath: "/p/old.ts", relativePath: "new.ts", type: "move", movePath: "/p/new.ts", additions: 1, deletions: 1 },
      { filePath: "/p/gone.ts", relativePath: "gone.ts", type: "delete", additions: 0, deletions: 3 },
      { filePath: "/p/added.ts", relativePath: "added.ts", type: "add", additions: 1, deletions: 0 },
      { filePath: "/p/changed.ts", relativePath: "changed.ts", type: "update", additions: 1, deletions: 1 },
    ];
    expect(run(opencode, [tool("apply_patch", { status: "completed", input: { patchText: "…" }, metadata: { files } })])).toStrictEqual([
      del("/p/old.ts", "apply_patch"),
      write("/p/new.ts", "apply_patch"),
      del("/p/gone.ts", "apply_patch"),
      write("/p/added.ts", "apply_patch"),
      write("/p/changed.ts", "apply_patch"),
    ]);
  });

  it("reads the patch text's file headers when the metadata has no file list", () => {
    const patchText =
      "*** Begin Patch\r\n*** Update File: a.ts\r\n*** Move to: b.ts\r\n@@\r\n-1\r\n+2\r\n*** Update File: c.ts\r\n@@\r\n-1\r\n+2\r\n*** Delete File: d.ts\r\n*** Add File: e.ts\r\n+x\r\n*** End Patch";
    expect(run(opencode, [tool("apply_patch", { status: "completed", input: { patchText }, metadata: {} })])).toStrictEqual([
      del("a.ts", "apply_patch"),
      write("b.ts", "apply_patch"),
      write("c.ts", "apply_patch"),
      del("d.ts", "apply_patch"),
      write("e.ts", "apply_patch"),
    ]);
  });

  it("ignores reads, shell commands, text and step events", () => {
    const lines = [
      tool("read", { status: "completed", input: { filePath: "/p/a" } }),
      tool("bash", { status: "completed", input: { command: "echo edit > write" } }),
      { type: "text", timestamp: 1, sessionID: "ses_1", part: { type: "text", text: "edit write apply_patch tool_use" } },
    ];
    expect(run(opencode, lines)).toStrictEqual([]);
  });

  it("recognises its events by their sessionID and part", () => {
    expect(opencode.detect({ type: "step_start", timestamp: 1, sessionID: "ses_1", part: {} })).toBe(true);
    expect(opencode.detect({ type: "tool_use", tool_name: "write_file", tool_id: "x" })).toBe(false);
  });
});

describe("Kilo Code's stream (a real run of kilo 7.7.7)", () => {
  it("is OpenCode's: detected as such, with the changes of each patch", () => {
    const { session, expected } = fixture("kilo");
    const changes: FileChange[] = [];
    const detected: Array<string | undefined> = [];
    feed(
      createAutoParser(
        (change) => changes.push(change),
        (format) => detected.push(format?.name),
      ),
      session,
    );
    expect(detected).toEqual(["opencode"]);
    expect(changes).toStrictEqual(expected);
  });
});
