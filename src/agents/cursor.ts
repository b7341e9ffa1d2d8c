import { includesAny, needle, pending, PendingCalls, stringField } from "./common.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink, FileChange } from "./types.js";

/**
 * Cursor Agent, `cursor-agent -p … --output-format stream-json` (cursor.com/docs/cli/reference/output-format):
 * `{ type: "tool_call", subtype: "started", call_id, tool_call: { writeToolCall: { args: { path, … } } } }`,
 * then the same with `subtype: "completed"` and `result: { success: { path (absolute), … } }`.
 * The docs show `readToolCall` and `writeToolCall`; `editToolCall` (`args.path`, `streamContent`)
 * and `deleteToolCall` (`args.path`) are known from recorded streams, and a failure from a
 * `result` without `success` (recordings show `{ error: … }`). The stream starts with a
 * Claude-like `system/init` that has `apiKeySource` and `cwd` but no `tools` list.
 */
export const cursor: AgentFormat = {
  name: "cursor",
  detect: (event) => {
    if (!isObject(event)) return false;
    if (event.type === "tool_call") return event.subtype === "started" || event.subtype === "completed";
    if (event.type === "thinking") return event.subtype === "delta" || event.subtype === "completed";
    return (
      event.type === "system" &&
      event.subtype === "init" &&
      "apiKeySource" in event &&
      !Array.isArray(event.tools) &&
      !("claude_code_version" in event)
    );
  },
  create: (emit) => new CursorParser(emit),
};

export const CURSOR_TOOLS: Readonly<Record<string, FileChange["kind"]>> = {
  writeToolCall: "write",
  editToolCall: "write",
  deleteToolCall: "delete",
};

const TOOL_CALL = needle("tool_call");
const TOOL_NEEDLES = Object.keys(CURSOR_TOOLS).map(needle);
const INIT = needle("init");

class CursorParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change));
  private cwd: string | undefined;

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (line.includes(TOOL_CALL) && includesAny(line, TOOL_NEEDLES)) {
      const event = parseEvent(line);
      if (event?.type === "tool_call" && isObject(event.tool_call)) this.onToolCall(event, event.tool_call);
    } else if (this.cwd === undefined && line.includes(INIT)) {
      const event = parseEvent(line);
      if (event?.type === "system" && event.subtype === "init") this.cwd = stringField(event, "cwd");
    }
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }

  private onToolCall(event: Record<string, unknown>, toolCall: Record<string, unknown>): void {
    const tool = Object.keys(CURSOR_TOOLS).find((key) => isObject(toolCall[key]));
    if (tool === undefined) return;
    const call = toolCall[tool] as Record<string, unknown>;
    const kind = CURSOR_TOOLS[tool]!;
    const id = stringField(event, "call_id") ?? stringField(call.args, "toolCallId");
    const argsPath = stringField(call.args, "path");
    if (event.subtype === "started") {
      if (id !== undefined && argsPath !== undefined) this.pending.add(id, [pending(argsPath, kind, tool, this.cwd)]);
      return;
    }
    if (event.subtype !== "completed") return;
    const announced = id === undefined ? undefined : this.pending.take(id);
    const result = call.result;
    if (!isObject(result) || !isObject(result.success)) return; // an error or a rejection: nothing changed
    const path = stringField(result.success, "path") ?? argsPath ?? announced?.[0]?.path;
    if (path !== undefined) this.emit({ ...pending(path, kind, tool, this.cwd), confirmed: true });
  }
}
