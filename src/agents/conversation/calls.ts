import type { Step } from "./types.js";

export type ToolStep = Extract<Step, { kind: "tool" }>;

/** What a call's start says: its name, summary and the files it writes, as far as known then. */
export interface CallStart {
  name: string;
  summary: string;
  files: string[];
}

/** How a call ended; `files` replaces the start's when the result lists what it really wrote. */
export interface CallOutcome {
  ok: boolean;
  error?: string;
  files?: string[];
}

/** At most this many calls are remembered (running, or ended before their start came); the oldest go first. */
export const MAX_CALLS = 10_000;

/**
 * The tool calls of one stream, paired by id. A call is reported when it starts ("running") and
 * again, with the same id, when it ends. A result before its call is reported at once (no name
 * yet) and remembered, so that the call, when it comes, is reported with its name and that
 * outcome, not as running. A call without an id gets one of its own (`#1`, …): no result can
 * name it, so it stays running. Memory is bounded: past MAX_CALLS the oldest is forgotten.
 */
export class ToolCalls {
  private readonly running = new Map<string, ToolStep>();
  private readonly ended = new Map<string, CallOutcome>();
  private unnamed = 0;

  start(id: string | undefined, call: CallStart): ToolStep {
    const key = id ?? this.newId();
    const early = this.ended.get(key);
    if (early !== undefined) {
      this.ended.delete(key);
      return finished({ kind: "tool", id: key, ...call, status: "running" }, early);
    }
    const step: ToolStep = { kind: "tool", id: key, ...call, status: "running" };
    remember(this.running, key, step);
    return { ...step, files: [...step.files] };
  }

  /** A call's end; undefined `id`: the result cannot be paired, and is left out. */
  finish(id: string | undefined, outcome: CallOutcome): ToolStep[] {
    if (id === undefined) return [];
    const started = this.running.get(id);
    if (started === undefined) {
      remember(this.ended, id, outcome);
      return [finished({ kind: "tool", id, name: "", summary: "", files: [], status: "running" }, outcome)];
    }
    this.running.delete(id);
    return [finished(started, outcome)];
  }

  /**
   * A call whose start and end come in one event (OpenCode, a Codex item seen only completed). Its
   * outcome is remembered as a result's is: a start of the same call coming late takes it.
   */
  whole(id: string | undefined, call: CallStart, outcome: CallOutcome): ToolStep {
    const key = id ?? this.newId();
    this.running.delete(key);
    remember(this.ended, key, outcome);
    return finished({ kind: "tool", id: key, ...call, status: "running" }, outcome);
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** End of input: the calls still running, as they are. */
  end(): ToolStep[] {
    const steps = [...this.running.values()];
    this.running.clear();
    this.ended.clear();
    return steps;
  }

  private newId(): string {
    return `#${++this.unnamed}`;
  }
}

function finished(step: ToolStep, outcome: CallOutcome): ToolStep {
  const done: ToolStep = { ...step, files: [...(outcome.files ?? step.files)], status: outcome.ok ? "ok" : "failed" };
  if (!outcome.ok && outcome.error !== undefined) done.error = outcome.error;
  return done;
}

function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key); // a repeated id counts from its latest call
  map.set(key, value);
  if (map.size > MAX_CALLS) map.delete(map.keys().next().value!);
}
