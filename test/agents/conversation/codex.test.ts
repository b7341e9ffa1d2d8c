import { describe, expect, it } from "vitest";
import { digest, read } from "./helpers.js";

const started = (item: object) => ({ type: "item.started", item: { status: "in_progress", ...item } });
const completed = (item: object) => ({ type: "item.completed", item });
const command = (id: string, extra: object = {}) => ({
  id,
  type: "command_execution",
  command: "bash -lc 'npm test'",
  aggregated_output: "",
  ...extra,
});

describe("the Codex conversation reader", () => {
  it.each([
    ["an agent message", [completed({ id: "i0", type: "agent_message", text: "Looking." })], ["text: Looking."]],
    ["reasoning is left out", [completed({ id: "i0", type: "reasoning", text: "**Plan**" })], []],
    [
      "a command that succeeded",
      [started(command("i1", { exit_code: null })), completed(command("i1", { exit_code: 0, status: "completed" }))],
      ["tool command_execution ok: bash -lc 'npm test'"],
    ],
    [
      "a command that failed, by its exit code",
      [started(command("i1")), completed(command("i1", { exit_code: 2, status: "failed" }))],
      ["tool command_execution failed: bash -lc 'npm test' (exit code 2)"],
    ],
    [
      "a declined command",
      [completed(command("i1", { status: "declined" }))],
      ["tool command_execution failed: bash -lc 'npm test' (declined)"],
    ],
    [
      "a patch, with its files (a rename names both)",
      [
        completed({
          id: "i2",
          type: "file_change",
          changes: [
            { path: "a.ts", kind: "update" },
            { path: "b.ts", kind: { type: "update", move_path: "c.ts" } },
            { path: "d.ts", kind: "delete" },
          ],
          status: "completed",
        }),
      ],
      ["tool file_change ok: a.ts, b.ts, c.ts, d.ts [a.ts, b.ts, c.ts, d.ts]"],
    ],
    [
      "a failed patch",
      [completed({ id: "i2", type: "file_change", changes: [{ path: "a.ts", kind: "update" }], status: "failed" })],
      ["tool file_change failed: a.ts [a.ts] (failed)"],
    ],
    [
      "an MCP call, failed",
      [
        started({ id: "i3", type: "mcp_tool_call", server: "docs", tool: "search", arguments: { query: "vitest" } }),
        completed({
          id: "i3",
          type: "mcp_tool_call",
          server: "docs",
          tool: "search",
          arguments: { query: "vitest" },
          error: { message: "timeout" },
          status: "failed",
        }),
      ],
      ["tool docs.search failed: vitest (timeout)"],
    ],
    ["a web search", [completed({ id: "i4", type: "web_search", query: "node streams" })], ["tool web_search ok: node streams"]],
    ["a todo list is not a call", [completed({ id: "i5", type: "todo_list", items: [{ text: "a", completed: false }] })], []],
    [
      "the turn's end carries the last message",
      [completed({ id: "i0", type: "agent_message", text: "Done." }), { type: "turn.completed", usage: { input_tokens: 1 } }],
      ["text: Done.", "result ok: Done."],
    ],
    ["turn.failed", [{ type: "turn.failed", error: { message: "stream disconnected" } }], ["result failed: stream disconnected"]],
    [
      "an error, then turn.failed with the same reason, said once",
      [
        { type: "error", message: "quota exceeded" },
        { type: "turn.failed", error: { message: "quota exceeded" } },
      ],
      ["result failed: quota exceeded"],
    ],
    [
      "an item.updated of a running call adds nothing",
      [started(command("i1")), { type: "item.updated", item: command("i1", { status: "in_progress" }) }],
      ["tool command_execution running: bash -lc 'npm test'"],
    ],
    [
      "an item of a kind added later is a call by its type",
      [completed({ id: "i9", type: "image_view", path: "a.png" })],
      ["tool image_view ok: a.png"],
    ],
  ])("%s", (_name, lines, expected) => {
    expect(digest(read("codex", lines))).toEqual(expected);
  });

  it("a call seen only completed is one step", () => {
    expect(read("codex", [completed(command("i1", { exit_code: 0, status: "completed" }))])).toHaveLength(1);
  });
});
