import { describe, expect, it } from "vitest";
import { copilot } from "../../src/agents/copilot.js";
import { run, write, del } from "../kit/agent-fixtures.js";

/** Copilot CLI 1.0.102's events, as a real run wrote them (ids and extra fields trimmed). */
const start = (id: string, toolName: string, args: unknown) => ({
  type: "tool.execution_start",
  data: { toolCallId: id, toolName, arguments: args, turnId: "0" },
  id: `e-${id}`,
  timestamp: "t",
});
const complete = (id: string, success: boolean, extra: object = {}) => ({
  type: "tool.execution_complete",
  data: { toolCallId: id, success, ...extra },
  id: `c-${id}`,
  timestamp: "t",
});

const patch = [
  "*** Begin Patch",
  "*** Update File: /p/a.txt",
  "@@",
  "-1",
  "+2",
  "*** Update File: /p/old.txt",
  "*** Move to: /p/new.txt",
  "*** Delete File: /p/gone.txt",
  "*** End Patch",
  "",
].join("\n");

describe("the Copilot CLI parser", () => {
  it("reports what fileEdits lists, a delete as a delete, once the call succeeded", () => {
    const lines = [
      start("c1", "apply_patch", patch),
      complete("c1", true, {
        fileEdits: [
          { path: "/p/a.txt", kind: "edit" },
          { path: "/p/new.txt", kind: "create" },
          { path: "/p/old.txt", kind: "delete" },
        ],
      }),
    ];
    expect(run(copilot, lines)).toStrictEqual([
      write("/p/a.txt", "apply_patch"),
      write("/p/new.txt", "apply_patch"),
      del("/p/old.txt", "apply_patch"),
    ]);
  });

  it("falls back to the tool's own path arguments where a result has no fileEdits (an experimental field)", () => {
    const lines = [
      start("c1", "create", { path: "/p/n.txt", file_text: "x" }),
      complete("c1", true),
      start("c2", "edit", { path: "/p/e.txt", old_str: "a", new_str: "b" }),
      complete("c2", true),
      start("c3", "apply_patch", patch),
      complete("c3", true),
    ];
    expect(run(copilot, lines)).toStrictEqual([
      write("/p/n.txt", "create"),
      write("/p/e.txt", "edit"),
      write("/p/a.txt", "apply_patch"),
      del("/p/old.txt", "apply_patch"),
      write("/p/new.txt", "apply_patch"),
      del("/p/gone.txt", "apply_patch"),
    ]);
  });

  it("drops a failed edit, and reports a failed patch's files unconfirmed (it may have half applied)", () => {
    const lines = [
      start("c1", "edit", { path: "/p/e.txt", old_str: "not there", new_str: "x" }),
      complete("c1", false, { error: { message: "No match found", code: "failure" } }),
      start("c2", "apply_patch", patch),
      complete("c2", false, { fileEdits: [{ path: "/p/a.txt", kind: "edit" }], error: { message: "ENOTDIR", code: "failure" } }),
    ];
    expect(run(copilot, lines)).toStrictEqual([write("/p/a.txt", "apply_patch", { confirmed: false })]);
  });

  it("pairs parallel calls by id, whatever order their results come in, and reports a call without result unconfirmed at the end", () => {
    const lines = [
      start("c1", "edit", { path: "/p/one.txt" }),
      start("c2", "create", { path: "/p/two.txt" }),
      start("c3", "create", { path: "/p/never.txt" }),
      complete("c2", true, { fileEdits: [{ path: "/p/two.txt", kind: "create" }] }),
      complete("c1", true, { fileEdits: [{ path: "/p/one.txt", kind: "edit" }] }),
    ];
    expect(run(copilot, lines)).toStrictEqual([
      write("/p/two.txt", "create"),
      write("/p/one.txt", "edit"),
      write("/p/never.txt", "create", { confirmed: false }),
    ]);
  });

  it("reads a patch too long to have been decoded up front", () => {
    const big = [
      "*** Begin Patch",
      "*** Add File: /p/big.txt",
      ...Array.from({ length: 3000 }, (_, i) => `+line ${i} ${"x".repeat(20)}`),
      "*** End Patch",
    ].join("\n");
    expect(run(copilot, [start("c1", "apply_patch", big), complete("c1", true)])).toStrictEqual([write("/p/big.txt", "apply_patch")]);
  });

  it("ignores the tools that write nothing, and results of calls it never saw", () => {
    const lines = [
      start("c1", "bash", { command: "rm x" }),
      complete("c1", true),
      complete("c9", true),
      { type: "result", sessionId: "s", exitCode: 0 },
    ];
    expect(run(copilot, lines)).toStrictEqual([]);
  });
});

describe("Copilot's detection", () => {
  it("knows its session events by their dotted type and data object, not Codex's dotted events", () => {
    expect(copilot.detect(start("c1", "create", {}))).toBe(true);
    expect(
      copilot.detect({
        type: "session.mcp_servers_loaded",
        ephemeral: true,
        data: { servers: [] },
        id: "u",
        timestamp: "t",
        parentId: "p",
      }),
    ).toBe(true);
    expect(copilot.detect({ type: "item.completed", item: { id: "item_1", type: "file_change", changes: [], status: "completed" } })).toBe(
      false,
    );
    expect(copilot.detect({ type: "thread.started", thread_id: "t" })).toBe(false);
    expect(copilot.detect({ type: "system", subtype: "init", session_id: "s" })).toBe(false);
  });
});
