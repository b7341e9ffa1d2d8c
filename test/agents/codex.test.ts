import { describe, expect, it } from "vitest";
import { codex } from "../../src/agents/codex.js";
import { del, run, write } from "../kit/agent-fixtures.js";

const item = (type: string, id: string, changes: object[], status?: string) => ({
  type,
  item: { id, type: "file_change", changes, ...(status ? { status } : {}) },
});

describe("the Codex parser", () => {
  it("reports every change of a completed file_change item", () => {
    const lines = [
      item(
        "item.completed",
        "i1",
        [
          { path: "/p/a", kind: "add" },
          { path: "/p/b", kind: "update" },
          { path: "/p/c", kind: "delete" },
        ],
        "completed",
      ),
    ];
    expect(run(codex, lines)).toStrictEqual([write("/p/a", "apply_patch"), write("/p/b", "apply_patch"), del("/p/c", "apply_patch")]);
  });

  it("reports every path of a failed or declined patch as unconfirmed, since a half-applied one wrote some", () => {
    const lines = [
      item(
        "item.completed",
        "i1",
        [
          { path: "/p/a", kind: "update" },
          { path: "/p/b", kind: "add" },
        ],
        "failed",
      ),
      item("item.completed", "i2", [{ path: "/p/c", kind: "delete" }], "declined"),
    ];
    expect(run(codex, lines)).toStrictEqual([
      write("/p/a", "apply_patch", { confirmed: false }),
      write("/p/b", "apply_patch", { confirmed: false }),
      del("/p/c", "apply_patch", { confirmed: false }),
    ]);
  });

  it("waits through in_progress announcements for the completion", () => {
    const lines = [
      item("item.started", "i1", [{ path: "/p/a", kind: "update" }], "in_progress"),
      item(
        "item.updated",
        "i1",
        [
          { path: "/p/a", kind: "update" },
          { path: "/p/b", kind: "add" },
        ],
        "in_progress",
      ),
      item(
        "item.completed",
        "i1",
        [
          { path: "/p/a", kind: "update" },
          { path: "/p/b", kind: "add" },
        ],
        "completed",
      ),
    ];
    expect(run(codex, lines)).toStrictEqual([write("/p/a", "apply_patch"), write("/p/b", "apply_patch")]);
  });

  it("reports a started patch that never completed as unconfirmed, deletes included", () => {
    const lines = [
      item(
        "item.started",
        "i1",
        [
          { path: "/p/a", kind: "update" },
          { path: "/p/gone", kind: "delete" },
        ],
        "in_progress",
      ),
    ];
    expect(run(codex, lines)).toStrictEqual([
      write("/p/a", "apply_patch", { confirmed: false }),
      del("/p/gone", "apply_patch", { confirmed: false }),
    ]);
  });

  it("reports a started patch that then failed once, unconfirmed", () => {
    const lines = [
      item("item.started", "i1", [{ path: "/p/a", kind: "update" }], "in_progress"),
      item("item.completed", "i1", [{ path: "/p/a", kind: "update" }], "failed"),
    ];
    expect(run(codex, lines)).toStrictEqual([write("/p/a", "apply_patch", { confirmed: false })]);
  });

  it("reports a codex rename as a delete and a write when the move target is given", () => {
    const lines = [
      item("item.completed", "i1", [{ path: "/p/old.ts", kind: "update", move_path: "/p/new.ts" }], "completed"),
      item("item.completed", "i2", [{ path: "/p/x.ts", kind: { type: "update", move_path: "/p/y.ts" } }], "completed"),
    ];
    expect(run(codex, lines)).toStrictEqual([
      del("/p/old.ts", "apply_patch"),
      write("/p/new.ts", "apply_patch"),
      del("/p/x.ts", "apply_patch"),
      write("/p/y.ts", "apply_patch"),
    ]);
  });

  it("ignores other items, other events and garbage", () => {
    const lines = [
      { type: "thread.started", thread_id: "t" },
      { type: "item.completed", item: { id: "i0", type: "command_execution", command: "touch file_change", status: "completed" } },
      { type: "item.completed", item: { id: "i9", type: "agent_message", text: "I made a file_change" } },
      "not json file_change",
      '["file_change"]',
      { type: "turn.completed", usage: {} },
    ];
    expect(run(codex, lines)).toStrictEqual([]);
  });

  it("recognises its thread and item events", () => {
    expect(codex.detect({ type: "thread.started", thread_id: "x" })).toBe(true);
    expect(codex.detect({ type: "item.completed", item: {} })).toBe(true);
    expect(codex.detect({ type: "system", subtype: "init" })).toBe(false);
  });
});
