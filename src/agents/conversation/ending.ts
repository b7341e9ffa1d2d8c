import { textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * How a run ends, for the streams whose end event carries no text of its own (Codex's
 * `turn.completed`, Gemini's `result`, …): its result text is the agent's last words, as Claude's
 * `result` has them.
 */
export class RunEnding {
  private lastText = "";

  /** The agent's words: a text step (none when empty), remembered as the result's text. */
  said(text: string | undefined): Step[] {
    const steps = textStep("text", text);
    if (steps.length > 0) this.lastText = text!;
    return steps;
  }

  ok(text?: string): Step {
    return { kind: "result", ok: true, text: text ?? this.lastText };
  }

  failed(reason: string | undefined): Step[] {
    return [{ kind: "result", ok: false, text: reason ?? "failed" }];
  }
}
