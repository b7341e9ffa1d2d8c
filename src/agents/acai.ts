import { includesAny, moveChanges, needle, pending, PendingCalls, startsWithAny, stringField, type PendingChange } from "./common.js";
import { isObject, parseEmbeddedObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * acai, `acai instruct --streaming-json` (travisennis/acai docs/design-docs/streaming-json-output.md):
 * `{ type: "init", session_id, cwd, tools }`, then OpenAI Responses-style items:
 * `{ type: "function_call", id, call_id, name, arguments: "<JSON string>" }` and
 * `{ type: "function_call_output", call_id, output }`. An output starting with "Failed" or
 * "Error" is a failure (acai's tools answer "Failed to save file: …"), and so is "The user
 * rejected …". Tool names: editFile / saveFile / deleteFile (`path`) and moveFile
 * (`source`, `destination`) from travisennis/acai-ts source/tools; the Rust acai's Edit (`path`)
 * and Write (`file_path`) from travisennis/acai docs/design-docs/tools.md.
 */
export const acai: AgentFormat = {
  name: "acai",
  detect: (event) => {
    if (!isObject(event)) return false;
    switch (event.type) {
      case "init":
        return typeof event.cwd === "string" && Array.isArray(event.tools) && !("model" in event) && !("timestamp" in event);
      case "function_call":
        return typeof event.name === "string" && "arguments" in event;
      case "function_call_output":
        return "call_id" in event && "output" in event;
      default:
        return false;
    }
  },
  create: (emit) => new AcaiParser(emit),
};

export interface AcaiTool {
  /** The argument fields the changes need. */
  fields: readonly string[];
  changes(args: Record<string, unknown>, name: string, cwd: string | undefined): PendingChange[];
}

const writes = (field: string): AcaiTool => ({
  fields: [field],
  changes: (args, name, cwd) => {
    const path = stringField(args, field);
    return path === undefined ? [] : [pending(path, "write", name, cwd)];
  },
});

export const ACAI_TOOLS: Readonly<Record<string, AcaiTool>> = {
  editFile: writes("path"),
  saveFile: writes("path"),
  Edit: writes("path"),
  Write: writes("file_path"),
  deleteFile: {
    fields: ["path"],
    changes: (args, name, cwd) => {
      const path = stringField(args, "path");
      return path === undefined ? [] : [pending(path, "delete", name, cwd)];
    },
  },
  moveFile: {
    fields: ["source", "destination"],
    changes: (args, name, cwd) => {
      const from = stringField(args, "source");
      const to = stringField(args, "destination");
      return from === undefined || to === undefined ? [] : moveChanges(from, to, name, cwd);
    },
  },
};

const FUNCTION_CALL = needle("function_call");
const FUNCTION_CALL_OUTPUT = needle("function_call_output");
const INIT = needle("init");
const TOOL_NEEDLES = Object.keys(ACAI_TOOLS).map(needle);
/** How a failed call's output starts (also read by the conversation reader). */
export const ACAI_FAILURE_PREFIXES: readonly string[] = ["Failed", "Error", "The user rejected"];

class AcaiParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change), { idKeys: ["call_id"] });
  private cwd: string | undefined;

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (line.includes(FUNCTION_CALL) && includesAny(line, TOOL_NEEDLES)) {
      const event = parseEvent(line);
      if (event?.type === "function_call") this.onCall(event);
    } else if (this.pending.size > 0 && line.includes(FUNCTION_CALL_OUTPUT) && this.pending.mentionedIn(line)) {
      const event = parseEvent(line);
      const id = stringField(event, "call_id");
      if (event?.type !== "function_call_output" || id === undefined) return;
      if (startsWithAny(event.output, ACAI_FAILURE_PREFIXES)) this.pending.take(id);
      else this.pending.confirm(id);
    } else if (this.cwd === undefined && line.includes(INIT)) {
      const event = parseEvent(line);
      if (event?.type === "init") this.cwd = stringField(event, "cwd");
    }
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }

  private onCall(event: Record<string, unknown>): void {
    const name = stringField(event, "name");
    const id = stringField(event, "call_id", "id");
    const tool = name !== undefined && Object.hasOwn(ACAI_TOOLS, name) ? ACAI_TOOLS[name] : undefined;
    if (tool === undefined || id === undefined || name === undefined) return;
    // Arguments are a JSON string holding the whole file for saveFile: read only what is needed.
    const args = parseEmbeddedObject(event.arguments, tool.fields);
    if (args !== undefined) this.pending.add(id, tool.changes(args, name, this.cwd));
  }
}
