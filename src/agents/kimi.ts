import { includesAny, needle, pending, PendingCalls, startsWithAny, stringField } from "./common.js";
import { isObject, parseEmbeddedObject, parseEvent } from "./sparse-json.js";
import type { AgentFormat, AgentParser, ChangeSink } from "./types.js";

/**
 * Kimi CLI, `kimi --print --output-format stream-json` (MoonshotAI/kimi-cli
 * docs/en/customization/print-mode.md, src/kimi_cli/ui/print/visualize.py): OpenAI-style
 * messages without a `type`:
 * `{ role: "assistant", content, tool_calls: [{ type: "function", id, function: { name, arguments } }] }`
 * and `{ role: "tool", tool_call_id, content }`. A failed tool's content starts with
 * `<system>ERROR` (src/kimi_cli/soul/message.py). WriteFile, StrReplaceFile and PatchFile take
 * `path`, which may be relative to Kimi's work dir; the stream does not say which directory
 * that is, so a relative path resolves against the project root (Kimi's default work dir is
 * the directory it was started in).
 */
export const kimi: AgentFormat = {
  name: "kimi",
  detect: (event) =>
    isObject(event) &&
    !("type" in event) &&
    ((event.role === "assistant" && ("content" in event || Array.isArray(event.tool_calls))) ||
      (event.role === "tool" && typeof event.tool_call_id === "string")),
  create: (emit) => new KimiParser(emit),
};

/** Kimi's tools that write a file, each by its `path` argument. */
export const KIMI_TOOLS: readonly string[] = ["WriteFile", "StrReplaceFile", "PatchFile"];
const TOOL_CALLS = needle("tool_calls");
const TOOL_NEEDLES = KIMI_TOOLS.map(needle);
const ERROR = "<system>ERROR";

class KimiParser implements AgentParser {
  private readonly pending = new PendingCalls((change) => this.emit(change), { idKeys: ["tool_call_id"] });

  constructor(private readonly emit: ChangeSink) {}

  line(line: Buffer): void {
    if (line.includes(TOOL_CALLS) && includesAny(line, TOOL_NEEDLES)) {
      const event = parseEvent(line);
      if (event?.role === "assistant" && Array.isArray(event.tool_calls)) for (const call of event.tool_calls) this.onCall(call);
    } else if (this.pending.size > 0 && this.pending.mentionedIn(line)) {
      const event = parseEvent(line);
      const id = stringField(event, "tool_call_id");
      if (event?.role !== "tool" || id === undefined) return;
      if (isKimiFailure(event)) this.pending.take(id);
      else this.pending.confirm(id);
    }
  }

  end(): void {
    this.pending.flushUnconfirmed();
  }

  private onCall(call: unknown): void {
    const id = stringField(call, "id");
    const fn = isObject(call) ? call.function : undefined;
    const name = stringField(fn, "name");
    if (id === undefined || name === undefined || !KIMI_TOOLS.includes(name) || !isObject(fn)) return;
    const args = parseEmbeddedObject(fn.arguments, ["path"]);
    const path = stringField(args, "path");
    if (path !== undefined) this.pending.add(id, [pending(path, "write", name)]);
  }
}

/** Did a `tool` message report a failure (also read by the conversation reader)? */
export function isKimiFailure(event: Record<string, unknown>): boolean {
  if (event.is_error === true || event.isError === true) return true;
  const content = event.content;
  if (!Array.isArray(content)) return startsWithAny(content, [ERROR]);
  const first = content.find((part) => isObject(part) && part.type === "text");
  return isObject(first) && startsWithAny(first.text, [ERROR]);
}
