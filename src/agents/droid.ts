import { moveChanges, needle, outcome, pending, PendingCalls, stringField, type PendingChange } from "./common.js";
import { patchTextChanges, patchTextOf } from "./patch-text.js";
import { isObject, parseEmbeddedObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Factory Droid, `droid exec -o stream-json …` (verified on 0.215.0): a `system/init` like
 * Claude Code's (`cwd`, `session_id`, `tools`, `model`) but with `reasoning_effort` and none of
 * Claude's own fields, then `message` events (`role`, `text`), one `tool_call`
 * (`id`, `toolName`, `parameters`) and one `tool_result` (same `id`, `isError`, `value` or
 * `error`) per call, and a final `completion`. Create and Edit name their file in
 * `parameters.file_path`; ApplyPatch (the GPT models' tool) gets the patch text in
 * `parameters.input`, and its result's `value` (a JSON string) lists each file with its
 * `display_operation` (create / update / delete) and `moved_to`. A failed Create or Edit wrote
 * nothing; a failed patch may have written its first files, so its headers are reported unconfirmed.
 */
export const droid: AgentFormat = {
  name: "droid",
  detect: (event) => isObject(event) && isDroidEvent(event),
  create: (emit) => new DroidParser(emit),
};

/** By the fields of its init, or by the event types only Droid writes (Claude's are `assistant` / `user`). */
function isDroidEvent(event: Record<string, unknown>): boolean {
  switch (event.type) {
    case "system":
      return event.subtype === "init" && "reasoning_effort" in event && !("claude_code_version" in event);
    case "tool_call":
      return typeof event.toolName === "string" && isObject(event.parameters);
    case "tool_result":
      return typeof event.isError === "boolean" && typeof event.id === "string";
    case "message":
      return typeof event.role === "string" && typeof event.session_id === "string";
    case "completion":
      return "finalText" in event && typeof event.session_id === "string";
    default:
      return false;
  }
}

const PATH_TOOLS = new Set(["Create", "Edit"]);
const PATCH_TOOL = "ApplyPatch";

const TOOL_CALL = needle("tool_call");
const TOOL_RESULT = needle("tool_result");
const INIT = needle("init");

class DroidParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change));
  private cwd: string | undefined;

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    const wanted = line.includes(TOOL_CALL) || line.includes(TOOL_RESULT) || (this.cwd === undefined && line.includes(INIT));
    const event = wanted ? parseEvent(line) : undefined;
    const id = stringField(event, "id");
    if (event?.type === "system" && event.subtype === "init") this.cwd = stringField(event, "cwd");
    else if (event?.type === "tool_call" && id !== undefined) {
      this.pending.add(id, parameterChanges(stringField(event, "toolName") ?? "", event.parameters, this.cwd));
    } else if (event?.type === "tool_result" && id !== undefined) this.result(id, event);
  }

  private result(id: string, event: Record<string, unknown>): void {
    const announced = this.pending.take(id);
    if (announced === undefined) return;
    const patch = announced[0]!.cause === PATCH_TOOL;
    if (event.isError === true) {
      if (patch) for (const change of announced) this.emit(outcome(change, false));
      return;
    }
    const listed = patch ? patchResultChanges(event.value, this.cwd) : undefined;
    for (const change of listed ?? announced) this.emit(outcome(change, true));
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }
}

/** The changes a call's parameters name (also read by the conversation reader). */
export function parameterChanges(tool: string, parameters: unknown, cwd: string | undefined): PendingChange[] {
  if (tool === PATCH_TOOL) {
    const patch = patchTextOf(isObject(parameters) ? parameters.input : undefined);
    return patch === undefined ? [] : patchTextChanges(patch, tool).map((change) => withCwd(change, cwd));
  }
  const path = PATH_TOOLS.has(tool) ? stringField(parameters, "file_path") : undefined;
  return path === undefined ? [] : [pending(path, "write", tool, cwd)];
}

/** What ApplyPatch's result says it did, or undefined when its `value` has no file list. */
export function patchResultChanges(value: unknown, cwd: string | undefined): PendingChange[] | undefined {
  const files = parseEmbeddedObject(value, ["files"])?.files;
  if (!Array.isArray(files)) return undefined;
  return files.flatMap((file): PendingChange[] => {
    const path = stringField(file, "file_path");
    if (path === undefined || !isObject(file)) return [];
    const movedTo = stringField(file, "moved_to");
    if (file.display_operation === "delete") return [pending(path, "delete", PATCH_TOOL, cwd)];
    if (movedTo !== undefined && movedTo !== path) return moveChanges(path, movedTo, PATCH_TOOL, cwd);
    return [pending(path, "write", PATCH_TOOL, cwd)];
  });
}

function withCwd(change: PendingChange, cwd: string | undefined): PendingChange {
  return cwd === undefined ? change : { ...change, cwd };
}
