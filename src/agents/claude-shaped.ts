import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Claude Code's stream-json, and the streams that copy its shape (Qwen Code, Amp): an
 * `assistant` event carries `tool_use` blocks; a later `user` event answers each with a
 * `tool_result` of the same id. The call is the intent, a result without `is_error` confirms it.
 */
export interface ClaudeShape {
  name: string;
  /** The tools that write a file, each with the input fields that may hold its path, in order. */
  tools: Record<string, readonly string[]>;
  detect(event: Record<string, unknown>): boolean;
}

interface PendingCall {
  path: string;
  cause: string;
  cwd: string | undefined;
}

export function claudeShaped(shape: ClaudeShape): AgentFormat {
  const toolNeedles = Object.keys(shape.tools).map((tool) => Buffer.from(JSON.stringify(tool)));
  return {
    name: shape.name,
    detect: (event) => isObject(event) && shape.detect(event),
    create: (emit) => new ClaudeShapedParser(shape, toolNeedles, emit),
  };
}

const TOOL_USE = Buffer.from('"tool_use"');
const TOOL_RESULT = Buffer.from('"tool_result"');
const INIT = Buffer.from('"init"');

class ClaudeShapedParser implements AgentParser {
  private readonly pending = new Map<string, PendingCall>();
  private cwd: string | undefined;

  constructor(
    private readonly shape: ClaudeShape,
    private readonly toolNeedles: Buffer[],
    private readonly emit: ChangeSink,
  ) {}

  line(line: Buffer): void {
    // Most lines are text, reads and their results: decide from bytes before decoding anything.
    if (line.includes(TOOL_USE) && this.toolNeedles.some((needle) => line.includes(needle))) {
      this.onToolUse(line);
    } else if (this.pending.size > 0 && line.includes(TOOL_RESULT) && this.mentionsPendingCall(line)) {
      this.onToolResult(line);
    } else if (this.cwd === undefined && line.includes(INIT)) {
      const event = parseEvent(line);
      if (event?.type === "system" && event.subtype === "init" && typeof event.cwd === "string") this.cwd = event.cwd;
    }
  }

  end(): void {
    for (const call of this.pending.values()) {
      this.emit({ path: call.path, kind: "write", cause: call.cause, confirmed: false, cwd: call.cwd });
    }
    this.pending.clear();
  }

  private onToolUse(line: Buffer): void {
    const event = parseEvent(line);
    if (event?.type !== "assistant") return;
    for (const block of contentBlocks(event)) {
      if (block.type !== "tool_use" || typeof block.id !== "string" || typeof block.name !== "string") continue;
      const fields = Object.hasOwn(this.shape.tools, block.name) ? this.shape.tools[block.name] : undefined;
      if (!fields || !isObject(block.input)) continue;
      const input = block.input;
      const path = fields.map((field) => input[field]).find((value) => typeof value === "string" && value !== "");
      if (typeof path === "string") this.pending.set(block.id, { path, cause: block.name, cwd: this.cwd });
    }
  }

  private mentionsPendingCall(line: Buffer): boolean {
    for (const id of this.pending.keys()) if (line.includes(id)) return true;
    return false;
  }

  private onToolResult(line: Buffer): void {
    const event = parseEvent(line);
    if (event?.type !== "user") return;
    for (const block of contentBlocks(event)) {
      if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      const call = this.pending.get(block.tool_use_id);
      if (!call) continue;
      this.pending.delete(block.tool_use_id);
      if (block.is_error === true) continue;
      this.emit({ path: call.path, kind: "write", cause: call.cause, confirmed: true, cwd: call.cwd });
    }
  }
}

function contentBlocks(event: Record<string, unknown>): Record<string, unknown>[] {
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isObject);
}
