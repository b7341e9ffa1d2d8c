import { stringField } from "../common.js";
import { CURSOR_TOOLS } from "../cursor.js";
import { isObject } from "../sparse-json.js";
import { ClaudeMessages } from "./claude.js";
import type { FamilyReader } from "./family.js";
import { reasonOf, summaryOf } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Cursor Agent, `-p --output-format stream-json`: Claude's `user`, `assistant` and `result`
 * events, with calls as `tool_call` events instead of blocks: `subtype` "started" then
 * "completed", paired by `call_id`, the call under one key of `tool_call` (`readToolCall`,
 * `writeToolCall`, `shellToolCall`, …: the name is that key without "ToolCall"), its `args`,
 * and at the end its `result`: `success`, or `error` (anything else, a rejection, fails too).
 * `thinking` events are left out.
 */
export function createCursorReader(): FamilyReader {
  return new CursorReader();
}

class CursorReader extends ClaudeMessages {
  override event(event: Record<string, unknown>): Step[] {
    if (event.type !== "tool_call") return super.event(event);
    const toolCall = isObject(event.tool_call) ? event.tool_call : {};
    const key = Object.keys(toolCall).find((name) => isObject(toolCall[name]));
    if (key === undefined) return [];
    const call = toolCall[key] as Record<string, unknown>;
    const id = stringField(event, "call_id") ?? stringField(call.args, "toolCallId");
    const result = isObject(call.result) ? call.result : undefined;
    const path = Object.hasOwn(CURSOR_TOOLS, key)
      ? (stringField(call.args, "path") ?? stringField(isObject(result) ? result.success : undefined, "path"))
      : undefined;
    const files = path === undefined ? [] : [path];
    const start = { name: key.replace(/ToolCall$/, ""), summary: summaryOf(call.args, files), files };
    if (event.subtype === "started") return [this.calls.start(id, start)];
    if (event.subtype !== "completed") return [];
    const ok = result !== undefined && isObject(result.success);
    const outcome = ok
      ? { ok }
      : { ok, error: reasonOf(result?.error) ?? (result === undefined ? "no result" : (Object.keys(result)[0] ?? "failed")) };
    return this.calls.isRunning(id ?? "") ? this.calls.finish(id, outcome) : [this.calls.whole(id, start, outcome)];
  }
}
