import { stringField } from "../common.js";
import { isKimiFailure, KIMI_TOOLS } from "../kimi.js";
import { isObject, parseEmbeddedObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { contentText, ERROR_CHARS, reasonOf, summaryOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Kimi CLI, `--print --output-format stream-json`: OpenAI-style messages without a `type`. An
 * `assistant` message has its words in `content` (a string, or parts: `text`, and `think` left
 * out) and its calls in `tool_calls` (`function.arguments` a JSON string); a `tool` message answers
 * one by `tool_call_id`, failed when Kimi's change parser says so (`<system>ERROR…`). A `user`
 * message is the prompt. The stream has no final event: it ends with the agent's last words.
 */
export function createKimiReader(): FamilyReader {
  return new KimiReader();
}

/** Kimi wraps what it says of a call's outcome in this tag. */
const SYSTEM_TAG = /<\/?system>/g;

class KimiReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    switch (event.role) {
      case "user":
        return textStep("prompt", contentText(event.content));
      case "assistant": {
        const calls = Array.isArray(event.tool_calls) ? event.tool_calls.filter(isObject).map((call) => this.call(call)) : [];
        return [...this.ending.said(contentText(event.content)), ...calls];
      }
      case "tool": {
        const id = stringField(event, "tool_call_id");
        if (!isKimiFailure(event)) return this.calls.finish(id, { ok: true });
        return this.calls.finish(id, {
          ok: false,
          error: reasonOf(contentText(event.content, ERROR_CHARS)?.replace(SYSTEM_TAG, "")) ?? "failed",
        });
      }
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private call(call: Record<string, unknown>): Step {
    const fn = isObject(call.function) ? call.function : {};
    const name = stringField(fn, "name") ?? "";
    const args = parseEmbeddedObject(fn.arguments, ["path"]);
    const path = KIMI_TOOLS.includes(name) ? stringField(args, "path") : undefined;
    const files = path === undefined ? [] : [path];
    return this.calls.start(stringField(call, "id"), { name, summary: summaryOf(args, files), files });
  }
}
