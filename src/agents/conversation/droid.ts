import { stringField } from "../common.js";
import { parameterChanges, patchResultChanges } from "../droid.js";
import { ToolCalls } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { pathsOf, reasonOf, summaryOf, textOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Factory Droid, `exec -o stream-json`: `message` events (`role` user: the prompt; assistant: the
 * agent's words in `text`), `tool_call` (`toolName`, `parameters`) and `tool_result` (`isError`,
 * `error.message`; an ApplyPatch's `value` lists the files it really wrote) paired by `id`, and a
 * final `completion` with `finalText`. An `error` event (`message`) fails the run.
 */
export function createDroidReader(): FamilyReader {
  return new DroidReader();
}

const PATCH_TOOL = "ApplyPatch";

class DroidReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    switch (event.type) {
      case "message":
        if (event.role === "user") return textStep("prompt", textOf(event.text));
        return event.role === "assistant" ? this.ending.said(textOf(event.text)) : [];
      case "tool_call": {
        const name = stringField(event, "toolName") ?? "";
        const files = pathsOf(parameterChanges(name, event.parameters, undefined));
        return [this.calls.start(stringField(event, "id"), { name, summary: summaryOf(event.parameters, files), files })];
      }
      case "tool_result":
        return this.result(event);
      case "completion":
        return [this.ending.ok(textOf(event.finalText))];
      case "error":
        return this.ending.failed(reasonOf(event.message) ?? reasonOf(event.error));
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private result(event: Record<string, unknown>): Step[] {
    const id = stringField(event, "id");
    if (event.isError === true) return this.calls.finish(id, { ok: false, error: reasonOf(event.error) ?? "failed" });
    const listed = stringField(event, "toolId") === PATCH_TOOL ? patchResultChanges(event.value, undefined) : undefined;
    return this.calls.finish(id, listed === undefined ? { ok: true } : { ok: true, files: pathsOf(listed) });
  }
}
