import { stringField } from "../common.js";
import { GEMINI_TOOLS } from "../gemini.js";
import { isObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { reasonOf, summaryOf, textOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Gemini CLI, `--output-format stream-json`: `message` events (`role` user: the prompt; assistant:
 * the agent's words, streamed as `delta` pieces that are joined into one text until another
 * event comes), `tool_use` / `tool_result` paired by `tool_id`, `error` events (`severity`
 * "error" ends the run; a warning is left out) and a final `result` (`status` "success" or
 * "error" with `error.message`). A failure said by an `error` then by the `result` is said once.
 */
export function createGeminiReader(): FamilyReader {
  return new GeminiReader();
}

class GeminiReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  /** The assistant's delta pieces so far. */
  private pieces: string[] = [];
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    if (event.type === "message" && event.role === "assistant") {
      const text = textOf(event.content) ?? "";
      if (event.delta === true) {
        this.pieces.push(text);
        return [];
      }
      return [...this.flush(), ...this.ending.said(text)];
    }
    return [...this.flush(), ...this.other(event)];
  }

  end(): Step[] {
    return [...this.flush(), ...this.calls.end()];
  }

  private other(event: Record<string, unknown>): Step[] {
    switch (event.type) {
      case "message":
        return event.role === "user" ? textStep("prompt", textOf(event.content)) : [];
      case "tool_use":
        return [this.toolUse(event)];
      case "tool_result": {
        const ok = event.status === "success" && !isObject(event.error);
        return this.calls.finish(
          stringField(event, "tool_id"),
          ok ? { ok } : { ok, error: reasonOf(event.error) ?? reasonOf(event.output) ?? "error" },
        );
      }
      case "error":
        return event.severity === "warning" ? [] : this.ending.failed(reasonOf(event.message) ?? reasonOf(event.error));
      case "result":
        if (event.status === "success" && !isObject(event.error)) return [this.ending.ok()];
        return this.ending.failed(reasonOf(event.error));
      default:
        return [];
    }
  }

  private toolUse(event: Record<string, unknown>): Step {
    const name = stringField(event, "tool_name") ?? "";
    const fields = Object.hasOwn(GEMINI_TOOLS, name) ? GEMINI_TOOLS[name]! : [];
    const path = stringField(event.parameters, ...fields);
    const files = path === undefined ? [] : [path];
    return this.calls.start(stringField(event, "tool_id"), { name, summary: summaryOf(event.parameters, files), files });
  }

  private flush(): Step[] {
    if (this.pieces.length === 0) return [];
    const text = this.pieces.join("");
    this.pieces = [];
    return this.ending.said(text);
  }
}
