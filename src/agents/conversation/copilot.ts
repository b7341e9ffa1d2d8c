import { stringField } from "../common.js";
import { argumentChanges, fileEditChanges } from "../copilot.js";
import { isObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { pathsOf, reasonOf, summaryOf, textOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * GitHub Copilot CLI, `-p … --output-format json`: session events `{ type, data }`. The prompt is a
 * `user.message`, the agent's words an `assistant.message` (its `_delta` pieces are left out: the
 * whole message follows); a call is `tool.execution_start` then `tool.execution_complete` (same
 * `toolCallId`, `success`, `error.message`, and `fileEdits` for what it wrote). A sub-agent's
 * events (a top-level `agentId`, or `parentToolCallId`) add their calls but not their prompt or
 * words. The run ends with `result` (`exitCode` 0 or not), or fails with `session.error`.
 */
export function createCopilotReader(): FamilyReader {
  return new CopilotReader();
}

class CopilotReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    const data = isObject(event.data) ? event.data : {};
    const sub = "agentId" in event || "parentToolCallId" in data;
    switch (event.type) {
      case "user.message":
        return sub ? [] : textStep("prompt", textOf(data.content));
      case "assistant.message":
        return sub ? [] : this.ending.said(textOf(data.content));
      case "tool.execution_start": {
        const name = stringField(data, "toolName") ?? "";
        const files = pathsOf(argumentChanges(name, data.arguments));
        return [this.calls.start(stringField(data, "toolCallId"), { name, summary: summaryOf(data.arguments, files), files })];
      }
      case "tool.execution_complete":
        return this.complete(data);
      case "session.error":
        return this.ending.failed(reasonOf(data));
      case "result":
        if (event.exitCode === 0 || event.exitCode === undefined) return [this.ending.ok()];
        return this.ending.failed(typeof event.exitCode === "number" ? `exit code ${event.exitCode}` : undefined);
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private complete(data: Record<string, unknown>): Step[] {
    const id = stringField(data, "toolCallId");
    const files = Array.isArray(data.fileEdits) ? pathsOf(fileEditChanges(data.fileEdits, "")) : undefined;
    if (data.success === true) return this.calls.finish(id, files === undefined ? { ok: true } : { ok: true, files });
    const error = reasonOf(data.error) ?? "failed";
    return this.calls.finish(id, files === undefined ? { ok: false, error } : { ok: false, error, files });
  }
}
