import { createConversationReader } from "../../../src/agents/conversation/index.js";
import type { Step } from "../../../src/agents/conversation/types.js";

/** Every step a reader of `format` yields for these lines (objects become JSON lines), end included. */
export function read(format: string | undefined, lines: Array<string | object>): Step[] {
  const reader = createConversationReader(format);
  const steps: Step[] = [];
  for (const line of lines) steps.push(...reader.line(typeof line === "string" ? line : JSON.stringify(line)));
  steps.push(...reader.end());
  return steps;
}

/**
 * A conversation as plain values, one string a step: `prompt: …`, `text: …`, `result ok: …` /
 * `result failed: …`, and each tool call once, as it stands last (`tool <name> <status>: <summary>
 * [files] (error)`), where it first appeared.
 */
export function digest(steps: Step[]): string[] {
  const out: string[] = [];
  const toolAt = new Map<string, number>();
  for (const step of steps) {
    if (step.kind === "tool") {
      const files = step.files.length > 0 ? ` [${step.files.join(", ")}]` : "";
      const line = `tool ${step.name} ${step.status}: ${step.summary}${files}${step.error === undefined ? "" : ` (${step.error})`}`;
      const at = toolAt.get(step.id);
      if (at === undefined) {
        toolAt.set(step.id, out.length);
        out.push(line);
      } else out[at] = line;
    } else if (step.kind === "result") out.push(`result ${step.ok ? "ok" : "failed"}: ${step.text}`);
    else out.push(`${step.kind}: ${step.text}`);
  }
  return out;
}
