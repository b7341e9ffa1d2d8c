import { CLAUDE_TOOLS } from "../claude.js";
import { stringField } from "../common.js";
import { isObject } from "../sparse-json.js";
import { ToolCalls } from "./calls.js";
import type { FamilyReader } from "./family.js";
import { contentText, ERROR_CHARS, reasonOf, summaryOf, textOf, textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * Claude Code's stream-json and the streams of its shape (Qwen Code, Amp; Cursor's messages):
 * `user` messages carry the prompt (a string, or text blocks) and `tool_result` blocks; `assistant`
 * messages carry `text` blocks (thinking is left out) and `tool_use` blocks; a final `result`
 * says how the run ended. A sub-agent's messages (`parent_tool_use_id` set) add their tool calls
 * but not their prompt or words, which its parent's Task call and result already stand for.
 * `stream_event` partial messages are left out: the whole message follows them.
 */
/** Claude Code wraps a tool's own failure in this tag: the reason is what it holds. */
const TOOL_USE_ERROR = /^<tool_use_error>([\s\S]*)<\/tool_use_error>$/;

export function createClaudeReader(): FamilyReader {
  return new ClaudeMessages();
}

export class ClaudeMessages implements FamilyReader {
  protected readonly calls = new ToolCalls();

  event(event: Record<string, unknown>): Step[] {
    const message = event.message;
    const sub = typeof event.parent_tool_use_id === "string";
    switch (event.type) {
      case "user":
        return isObject(message) ? this.user(message.content, sub) : [];
      case "assistant":
        return isObject(message) ? this.assistant(message.content, sub) : [];
      case "result":
        return [claudeResult(event)];
      default:
        return [];
    }
  }

  end(): Step[] {
    return this.calls.end();
  }

  /** A user message: the prompt, or the results of calls (text beside a result is Claude Code's note on it, not a prompt). */
  private user(content: unknown, sub: boolean): Step[] {
    if (!Array.isArray(content)) return sub ? [] : textStep("prompt", textOf(content));
    const blocks = content.filter(isObject);
    const results = blocks.filter((block) => block.type === "tool_result");
    if (results.length > 0) return results.flatMap((block) => this.toolResult(block));
    if (sub) return [];
    return blocks.filter((block) => block.type === "text").flatMap((block) => textStep("prompt", textOf(block.text)));
  }

  private toolResult(block: Record<string, unknown>): Step[] {
    const id = stringField(block, "tool_use_id");
    if (block.is_error !== true) return this.calls.finish(id, { ok: true });
    const reason = contentText(block.content, ERROR_CHARS)?.replace(TOOL_USE_ERROR, "$1");
    return this.calls.finish(id, { ok: false, error: reasonOf(reason) ?? "failed" });
  }

  private assistant(content: unknown, sub: boolean): Step[] {
    if (!Array.isArray(content)) return sub ? [] : textStep("text", textOf(content));
    const steps: Step[] = [];
    for (const block of content) {
      if (!isObject(block)) continue;
      if (block.type === "text" && !sub) steps.push(...textStep("text", textOf(block.text)));
      else if (block.type === "tool_use") steps.push(this.toolUse(block));
    }
    return steps;
  }

  private toolUse(block: Record<string, unknown>): Step {
    const name = stringField(block, "name") ?? "";
    const fields = Object.hasOwn(CLAUDE_TOOLS, name) ? CLAUDE_TOOLS[name]! : [];
    const path = stringField(block.input, ...fields);
    const files = path === undefined ? [] : [path];
    return this.calls.start(stringField(block, "id"), { name, summary: summaryOf(block.input, files), files });
  }
}

/**
 * Claude's `result`: `subtype` "success" unless the run failed (`error_max_turns`,
 * `error_during_execution`, …), `is_error` also set by an API failure under "success"; the
 * reason is in `result`, `errors` (the SDK's error subtypes), or `error` (Amp's string, Qwen's object).
 */
export function claudeResult(event: Record<string, unknown>): Step {
  const ok = event.is_error !== true && (event.subtype === undefined || event.subtype === "success");
  const result = textOf(event.result);
  if (ok) return { kind: "result", ok, text: result ?? "" };
  const errors = Array.isArray(event.errors) ? event.errors.map(reasonOf).filter((e) => e !== undefined) : [];
  const reason = reasonOf(result) ?? (errors.length > 0 ? errors.join("\n") : undefined) ?? reasonOf(event.error);
  return { kind: "result", ok, text: reason ?? stringField(event, "subtype") ?? "failed" };
}
