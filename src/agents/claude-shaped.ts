import { needle, pending, PendingCalls } from "./common.js";
import { isObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Claude Code's stream-json, and the streams that copy its shape (Qwen Code, Amp): an
 * `assistant` event carries `tool_use` blocks; a later `user` event answers each with a
 * `tool_result` of the same id. The call is the intent, a result without `is_error` confirms it.
 * Sub-agent events (`parent_tool_use_id` set) have the same shape and count the same.
 */
export interface ClaudeShape {
  name: string;
  /** The tools that write a file, each with the input fields that may hold its path, in order. */
  tools: Record<string, readonly string[]>;
  detect(event: Record<string, unknown>): boolean;
}

export function claudeShaped(shape: ClaudeShape): AgentFormat {
  const toolNeedles = Object.keys(shape.tools).map(needle);
  return {
    name: shape.name,
    detect: (event) => isObject(event) && shape.detect(event),
    create: (emit) => new ClaudeShapedParser(shape, toolNeedles, emit),
  };
}

const TOOL_USE = needle("tool_use");
const TOOL_RESULT = needle("tool_result");
const INIT = needle("init");

class ClaudeShapedParser implements AgentParser {
  private readonly pending = new PendingCalls();
  private cwd: string | undefined;

  constructor(
    private readonly shape: ClaudeShape,
    private readonly toolNeedles: Buffer[],
    private readonly emit: ChangeSink,
  ) {}

  line(line: Buffer): void {
    // Most lines are text, reads and their results: decide from bytes before decoding anything.
    if (!this.mayMatter(line)) return;
    const event = parseEvent(line);
    if (event === undefined) return;
    if (event.type === "assistant") this.onAssistant(event);
    else if (event.type === "user") this.onUser(event);
    else if (event.type === "system" && event.subtype === "init" && typeof event.cwd === "string" && this.cwd === undefined) {
      this.cwd = event.cwd;
    }
  }

  end(): void {
    this.pending.flushUnconfirmed(this.emit);
  }

  private mayMatter(line: Buffer): boolean {
    if (line.includes(TOOL_USE) && this.toolNeedles.some((n) => line.includes(n))) return true;
    if (this.pending.size > 0 && line.includes(TOOL_RESULT) && this.pending.mentionedIn(line)) return true;
    return this.cwd === undefined && line.includes(INIT);
  }

  private onAssistant(event: Record<string, unknown>): void {
    for (const block of contentBlocks(event)) {
      if (block.type !== "tool_use" || typeof block.id !== "string" || typeof block.name !== "string") continue;
      const fields = Object.hasOwn(this.shape.tools, block.name) ? this.shape.tools[block.name] : undefined;
      if (fields === undefined || !isObject(block.input)) continue;
      const input = block.input;
      const path = fields.map((field) => input[field]).find((value) => typeof value === "string" && value !== "");
      if (typeof path === "string") this.pending.add(block.id, [pending(path, "write", block.name, this.cwd)]);
    }
  }

  private onUser(event: Record<string, unknown>): void {
    for (const block of contentBlocks(event)) {
      if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      if (block.is_error === true) this.pending.take(block.tool_use_id);
      else this.pending.confirm(block.tool_use_id, this.emit);
    }
  }
}

function contentBlocks(event: Record<string, unknown>): Record<string, unknown>[] {
  const message = event.message;
  if (!isObject(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isObject);
}
