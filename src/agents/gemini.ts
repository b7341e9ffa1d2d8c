import { needle, pending, PendingCalls, stringField } from "./common.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Gemini CLI, `gemini -p … --output-format stream-json` (google-gemini/gemini-cli
 * packages/core/src/output/types.ts, packages/cli/src/nonInteractiveCli.ts):
 * `{ type: "tool_use", tool_name, tool_id, parameters }`, then
 * `{ type: "tool_result", tool_id, status: "success" | "error", output?, error? }`.
 * Gemini reports a cancelled call as `success` without an error; reading the file at flush
 * time shows it unchanged, so that costs a hash and nothing more.
 */
export const gemini: AgentFormat = {
  name: "gemini",
  detect: (event) => {
    if (!isObject(event)) return false;
    switch (event.type) {
      case "init":
        return typeof event.session_id === "string" && typeof event.model === "string" && typeof event.timestamp === "string";
      case "tool_use":
        return typeof event.tool_name === "string" && "tool_id" in event;
      case "tool_result":
        return "tool_id" in event && typeof event.status === "string";
      case "message":
        return typeof event.role === "string" && typeof event.timestamp === "string";
      default:
        return false;
    }
  },
  create: (emit) => new GeminiParser(emit),
};

/** Gemini's file-writing tools (write-file.ts, edit.ts: `replace`) and their path parameter. */
export const GEMINI_TOOLS: Readonly<Record<string, readonly string[]>> = {
  write_file: ["file_path"],
  replace: ["file_path"],
};

const TOOL_USE = needle("tool_use");
const TOOL_RESULT = needle("tool_result");
const TOOL_NEEDLES = Object.keys(GEMINI_TOOLS).map(needle);

class GeminiParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change), { idKeys: ["tool_id"] });

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (line.includes(TOOL_USE) && TOOL_NEEDLES.some((n) => line.includes(n))) {
      const event = parseEvent(line);
      if (event?.type !== "tool_use" || typeof event.tool_name !== "string" || typeof event.tool_id !== "string") return;
      const fields = Object.hasOwn(GEMINI_TOOLS, event.tool_name) ? GEMINI_TOOLS[event.tool_name] : undefined;
      const path = fields === undefined ? undefined : stringField(event.parameters, ...fields);
      if (path !== undefined) this.pending.add(event.tool_id, [pending(path, "write", event.tool_name)]);
    } else if (this.pending.size > 0 && line.includes(TOOL_RESULT) && this.pending.mentionedIn(line)) {
      const event = parseEvent(line);
      if (event?.type !== "tool_result" || typeof event.tool_id !== "string") return;
      if (event.status === "success" && !isObject(event.error)) this.pending.confirm(event.tool_id);
      else this.pending.take(event.tool_id);
    }
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }
}
