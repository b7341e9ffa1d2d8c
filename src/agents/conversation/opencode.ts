import { stringField } from "../common.js";
import { changesOf } from "../opencode.js";
import { isObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { pathsOf, reasonOf, summaryOf, textOf } from "./steps.js";
import type { Step } from "./types.js";

/**
 * OpenCode (and Kilo Code), `run --format json`: a `text` event holds one whole text part; a
 * `tool_use` event comes once a call has ended (`state.status` "completed" or "error"), so it is
 * one step; a `step_finish` with reason "stop" ends the run (its text: the last words), and an
 * `error` event (`error.data.message`, else `error.name`) fails it. The stream does not carry the prompt.
 */
export function createOpenCodeReader(): FamilyReader {
  return new OpenCodeReader();
}

class OpenCodeReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    const part = isObject(event.part) ? event.part : undefined;
    switch (event.type) {
      case "text":
        return this.ending.said(textOf(part?.text));
      case "tool_use":
        return part === undefined ? [] : this.toolUse(part);
      case "step_finish":
        return part?.reason === "stop" ? [this.ending.ok()] : [];
      case "error":
        return this.ending.failed(reasonOf(event.error) ?? stringField(event.error, "name"));
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private toolUse(part: Record<string, unknown>): Step[] {
    const name = stringField(part, "tool") ?? "";
    const state = isObject(part.state) ? part.state : {};
    const files = pathsOf(changesOf(name, state));
    const call = { name, summary: summaryOf(state.input, files), files };
    const id = stringField(part, "callID", "id");
    if (state.status === "completed") return [this.calls.whole(id, call, { ok: true })];
    if (state.status === "error") return [this.calls.whole(id, call, { ok: false, error: reasonOf(state.error) ?? "error" })];
    return id !== undefined && this.calls.isRunning(id) ? [] : [this.calls.start(id, call)];
  }
}
