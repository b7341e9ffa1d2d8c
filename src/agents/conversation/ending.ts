import { textStep } from "./steps.js";
import type { Step } from "./types.js";

/**
 * How a run ends, for the streams whose end event carries no text of its own (Codex's
 * `turn.completed`, Gemini's `result`, …): its result text is the agent's last words, as Claude's
 * `result` has them. A failure that two events report in a row (an `error`, then the turn's or
 * run's failure with the same reason) is said once.
 */
export class RunEnding {
  private lastText = "";
  private lastFailure: string | undefined;

  /** The agent's words: a text step (none when empty), remembered as the result's text. */
  said(text: string | undefined): Step[] {
    const steps = textStep("text", text);
    if (steps.length > 0) this.lastText = text!;
    return steps;
  }

  ok(text?: string): Step {
    this.lastFailure = undefined;
    return { kind: "result", ok: true, text: text ?? this.lastText };
  }

  failed(reason: string | undefined): Step[] {
    const text = reason ?? "failed";
    if (text === this.lastFailure) return [];
    this.lastFailure = text;
    return [{ kind: "result", ok: false, text }];
  }
}
