import { ACAI_FAILURE_PREFIXES, ACAI_TOOLS } from "../acai.js";
import { startsWithAny, stringField } from "../common.js";
import { parseEmbeddedObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import { claudeResult } from "./claude.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { pathsOf, reasonOf, summaryOf, textOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * acai, `instruct --streaming-json`: `message` events (`role` user: the prompt; assistant: the
 * agent's words), `function_call` (`arguments` a JSON string) and `function_call_output` paired by
 * `call_id`, a failure told by how its output starts, as acai's change parser reads it. `reasoning`
 * is left out. Assumed, as no first-party source shows them: a final `result` of Claude's shape, and
 * an `error` event with a `message`.
 */
export function createAcaiReader(): FamilyReader {
  return new AcaiReader();
}

class AcaiReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    switch (event.type) {
      case "message":
        if (event.role === "user") return textStep("prompt", textOf(event.content));
        return event.role === "assistant" ? this.ending.said(textOf(event.content)) : [];
      case "function_call":
        return [this.call(event)];
      case "function_call_output": {
        const ok = !startsWithAny(event.output, ACAI_FAILURE_PREFIXES);
        return this.calls.finish(stringField(event, "call_id"), ok ? { ok } : { ok, error: reasonOf(event.output) ?? "failed" });
      }
      case "result":
        return [event.result === undefined && event.is_error !== true ? this.ending.ok() : claudeResult(event)];
      case "error":
        return this.ending.failed(reasonOf(event.message) ?? reasonOf(event.error));
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private call(event: Record<string, unknown>): Step {
    const name = stringField(event, "name") ?? "";
    const tool = Object.hasOwn(ACAI_TOOLS, name) ? ACAI_TOOLS[name] : undefined;
    // The arguments hold a whole file for saveFile: only the fields the summary and the files need are read.
    const args = parseEmbeddedObject(event.arguments, tool?.fields ?? []);
    const files = args === undefined || tool === undefined ? [] : pathsOf(tool.changes(args, name, undefined));
    return this.calls.start(stringField(event, "call_id", "id"), { name, summary: summaryOf(args, files), files });
  }
}
