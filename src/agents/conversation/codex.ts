import { changesOf } from "../codex.js";
import { stringField } from "../common.js";
import { isObject } from "../sparse-json.js";
import { ToolCalls, type CallOutcome, type CallStart } from "./calls.js";
import { RunEnding } from "./ending.js";
import type { FamilyReader } from "./family.js";
import { pathsOf, reasonOf, summaryOf, textOf } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Codex, `codex exec --json`: each item is announced (`item.started`, `item.updated`) and ends
 * with `item.completed`; older versions send only the latter. An `agent_message` is the agent's
 * words; `reasoning`, `todo_list` and the non-fatal `error` item are left out; every other item
 * (`command_execution`, `file_change`, `mcp_tool_call`, `web_search`, and kinds added later) is a
 * tool call named by its type. The run ends with `turn.completed` (its text: the last message),
 * or fails with `turn.failed` or a stream `error` (the same reason twice in a row is said once).
 * The stream does not carry the prompt.
 */
export function createCodexReader(): FamilyReader {
  return new CodexReader();
}

const NOT_CALLS = new Set(["agent_message", "reasoning", "todo_list", "error", "user_message"]);

class CodexReader implements FamilyReader {
  private readonly calls = new ToolCalls();
  private readonly ending = new RunEnding();

  event(event: Record<string, unknown>): Step[] {
    switch (event.type) {
      case "item.started":
      case "item.updated":
      case "item.completed":
        return isObject(event.item) ? this.item(event.type, event.item) : [];
      case "turn.completed":
        return [this.ending.ok()];
      case "turn.failed":
        return this.ending.failed(reasonOf(event.error));
      case "error":
        return this.ending.failed(reasonOf(event.message) ?? reasonOf(event.error));
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  private item(type: string, item: Record<string, unknown>): Step[] {
    if (item.type === "agent_message") {
      return type === "item.completed" ? this.ending.said(textOf(item.text)) : [];
    }
    if (typeof item.type !== "string" || NOT_CALLS.has(item.type)) return [];
    const id = stringField(item, "id");
    const running = id !== undefined && this.calls.isRunning(id);
    const ended = type === "item.completed" ? outcomeOf(item) : undefined;
    if (ended === undefined) return running ? [] : [this.calls.start(id, callOf(item))];
    const call = callOf(item);
    // The completed item lists the files as they ended up: they replace the announced ones.
    return running ? this.calls.finish(id, { ...ended, files: call.files }) : [this.calls.whole(id, call, ended)];
  }
}

function callOf(item: Record<string, unknown>): CallStart {
  const type = item.type as string;
  if (type === "file_change") {
    const files = pathsOf(changesOf(item));
    return { name: type, summary: summaryOf(undefined, files), files };
  }
  if (type === "mcp_tool_call") {
    const name = [stringField(item, "server"), stringField(item, "tool")].filter((part) => part !== undefined).join(".");
    return { name: name || type, summary: summaryOf(item.arguments), files: [] };
  }
  return { name: type, summary: summaryOf(item), files: [] };
}

/** How a completed item ended, or undefined while it is still in progress. */
function outcomeOf(item: Record<string, unknown>): CallOutcome | undefined {
  const status = item.status;
  if (status === "in_progress") return undefined;
  const exitCode = typeof item.exit_code === "number" ? item.exit_code : undefined;
  if ((status === undefined || status === "completed") && (exitCode === undefined || exitCode === 0)) return { ok: true };
  const reason = reasonOf(item.error) ?? (exitCode !== undefined && exitCode !== 0 ? `exit code ${exitCode}` : undefined);
  return { ok: false, error: reason ?? (typeof status === "string" ? status : "failed") };
}
