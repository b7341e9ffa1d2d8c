import { Needle, outcome, pending, PendingCalls, stringField, type PendingChange } from "./common.js";
import { patchTextChanges, patchTextOf } from "./patch-text.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * GitHub Copilot CLI, `copilot -p … --allow-all-tools --output-format json` (verified on 1.0.102):
 * every line is a session event `{ type, data, id, timestamp, parentId, ephemeral? }`, the types
 * dotted (`session.*`, `user.message`, `assistant.*`, `tool.*`, `subagent.*`), plus one final
 * `{ type: "result", sessionId, exitCode, usage }`. A call is `tool.execution_start`
 * (`data.toolCallId`, `toolName`, `arguments`); its outcome is `tool.execution_complete` with
 * the same id, `success`, and `fileEdits: [{ path, kind: "create" | "edit" | "delete" }]` (a
 * rename is a create and a delete). A sub-agent's calls are in the same stream (`parentToolCallId`).
 *
 * `fileEdits` is marked experimental in Copilot's event schema (present on success, and on a
 * partial failure with what was committed), so where a result has none the
 * tool's own path arguments are read instead: `create` / `edit` (`path`), and the headers of
 * `apply_patch`'s patch (its `arguments` is the patch text; the tool of the GPT-5 models).
 * A failed edit wrote nothing; a failed patch may have written its first files, so what it
 * names is reported unconfirmed.
 */
export const copilot: AgentFormat = {
  name: "copilot",
  detect: (event) =>
    isObject(event) &&
    typeof event.type === "string" &&
    COPILOT_EVENT.test(event.type) &&
    isObject(event.data) &&
    typeof event.id === "string",
  create: (emit) => new CopilotParser(emit),
};

/**
 * The families of the session event types in Copilot's schema (schemas/session-events.schema.json
 * of 1.0.102). Codex's dotted types (`thread.`, `turn.`, `item.`) are none of them, nor carry `data`.
 */
const COPILOT_EVENT = new RegExp(
  `^(${[
    "agent",
    "assistant",
    "auto_mode_switch",
    "capabilities",
    "command",
    "commands",
    "elicitation",
    "exit_plan_mode",
    "external_tool",
    "hook",
    "human_response",
    "mcp",
    "mcp_app",
    "model",
    "pending_messages",
    "permission",
    "sampling",
    "sandbox",
    "session",
    "session_limits_exhausted",
    "skill",
    "subagent",
    "system",
    "tool",
    "tool_search",
    "ui",
    "user",
    "user_input",
    "workflow",
  ].join("|")})\\.[a-z_.]+$`,
);

/** The tools that write a file, by the argument that names it; apply_patch is read from its patch. */
const PATH_TOOLS: Record<string, string> = { create: "path", edit: "path" };
const PATCH_TOOL = "apply_patch";

const STARTED = new Needle("tool.execution_start");
const COMPLETED = new Needle("tool.execution_complete");

class CopilotParser implements AgentParser {
  /** The calls whose arguments name files, by id: the fallback of a result without `fileEdits`. */
  private readonly pending = new PendingCalls((change) => this.emit(change));

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (!STARTED.in(line) && !COMPLETED.in(line)) return;
    const event = parseEvent(line);
    const data = event?.data;
    const id = stringField(data, "toolCallId");
    if (!isObject(data) || id === undefined) return;
    if (event!.type === "tool.execution_start") this.pending.add(id, argumentChanges(stringField(data, "toolName") ?? "", data.arguments));
    else if (event!.type === "tool.execution_complete") this.completed(id, data);
  }

  private completed(id: string, data: Record<string, unknown>): void {
    const announced = this.pending.take(id) ?? [];
    const tool = announced[0]?.cause ?? "copilot";
    const success = data.success === true;
    const listed = Array.isArray(data.fileEdits) ? fileEditChanges(data.fileEdits, tool) : undefined;
    // Without the list, a failed edit or create wrote nothing; a failed patch may have half applied.
    const changes = listed ?? (success || tool === PATCH_TOOL ? announced : []);
    for (const change of changes) this.emit(outcome(change, success));
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }
}

/** The changes a call's arguments name (also read by the conversation reader). */
export function argumentChanges(tool: string, args: unknown): PendingChange[] {
  if (tool === PATCH_TOOL) {
    const patch = patchTextOf(args) ?? patchTextOf(isObject(args) ? args.input : undefined);
    return patch === undefined ? [] : patchTextChanges(patch, tool);
  }
  const key = PATH_TOOLS[tool];
  const path = key === undefined ? undefined : stringField(args, key);
  return path === undefined ? [] : [pending(path, "write", tool)];
}

/** The changes a result's `fileEdits` list. */
export function fileEditChanges(fileEdits: unknown[], tool: string): PendingChange[] {
  return fileEdits.flatMap((edit) => {
    const path = stringField(edit, "path");
    if (path === undefined || !isObject(edit)) return [];
    // create, edit, and a kind this parser does not know: reading the file at flush time tells what it is.
    return [pending(path, edit.kind === "delete" ? "delete" : "write", tool)];
  });
}
