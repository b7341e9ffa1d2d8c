import type { Timers } from "../../../src/util/timers.js";
import type { Random } from "./random.js";

/**
 * The simulation's one thread of time. Every await of the code under test that stands for I/O (a
 * request, a file read or write, a save of the state file) goes through `gate()`, and every timer
 * through `timersFor()`: the scheduler alone decides, with the seed, which waiting step goes on
 * next and how far the virtual clock moves. Between two steps the microtasks run to the end, so a
 * run is a pure function of its seed. An owner that crashed is never resumed: its steps and timers
 * are dropped, as a killed process's would be.
 */

interface Waiting {
  owner: string;
  label: string;
  resume: () => void;
}

interface Timer {
  at: number;
  seq: number;
  owner: string;
  callback: () => void;
  cancelled: boolean;
}

/** 2026-11-25 10:00:00 UTC: conflict copies and backups are named by this clock. */
export const SIM_EPOCH = Date.UTC(2026, 10, 25, 10, 0, 0);

export class Scheduler {
  private clock = SIM_EPOCH;
  private waiting: Waiting[] = [];
  private timers: Timer[] = [];
  private seq = 0;
  private readonly dead = new Set<string>();
  steps = 0;
  /** The last steps taken, for a failing seed's story. */
  readonly trace: string[] = [];

  constructor(
    private readonly random: Random,
    /** Keep the story of the run (a replay of one seed): costly, so off for the thousands. */
    readonly tracing = false,
  ) {}

  now(): number {
    return this.clock;
  }

  /** Waits until the scheduler picks this step. */
  gate(owner: string, label: string): Promise<void> {
    if (this.dead.has(owner)) return new Promise(() => undefined);
    return new Promise((resume) => this.waiting.push({ owner, label, resume }));
  }

  timersFor(owner: string): Timers {
    return {
      now: () => this.clock,
      setTimeout: (callback, ms) => {
        const timer: Timer = { at: this.clock + Math.max(0, ms), seq: this.seq++, owner, callback, cancelled: false };
        if (!this.dead.has(owner)) this.timers.push(timer);
        return timer;
      },
      clearTimeout: (handle) => {
        if (handle) (handle as Timer).cancelled = true;
      },
    };
  }

  /** The owner is gone: none of its steps or timers ever runs again. */
  kill(owner: string): void {
    this.dead.add(owner);
    this.waiting = this.waiting.filter((w) => w.owner !== owner);
    this.timers = this.timers.filter((t) => t.owner !== owner);
  }

  /** Whether the owner was killed (its intents are left for the next process to settle). */
  isDead(owner: string): boolean {
    return this.dead.has(owner);
  }

  log(line: () => string): void {
    if (!this.tracing) return;
    this.trace.push(`[${this.steps} +${this.clock - SIM_EPOCH}ms] ${line()}`);
    if (this.trace.length > 2000) this.trace.shift();
  }

  /**
   * One step: the clock moves on a little (due timers fire), then one waiting step, picked at
   * random, goes on; then every microtask runs. False when nothing waits and no timer is set.
   */
  async step(maxAdvanceMs = 20): Promise<boolean> {
    if (this.timers.some((t) => t.cancelled)) this.timers = this.timers.filter((t) => !t.cancelled);
    if (this.waiting.length === 0) {
      if (this.timers.length === 0) return false;
      this.clock = Math.max(
        this.clock,
        this.timers.reduce((earliest, t) => Math.min(earliest, t.at), Infinity),
      );
    } else {
      this.clock += this.random.int(0, maxAdvanceMs);
    }
    this.steps++;
    this.fireDue();
    if (this.waiting.length > 0) this.waiting.splice(this.random.int(0, this.waiting.length - 1), 1)[0]!.resume();
    await drain();
    return true;
  }

  /** Runs steps until `done` settles (or nothing is left to run: a deadlock is an error). */
  async until<T>(done: Promise<T>, maxSteps = 100_000): Promise<T> {
    let finished = false;
    const result = done.finally(() => (finished = true));
    result.catch(() => undefined);
    await drain();
    for (let i = 0; !finished; i++) {
      if (i >= maxSteps) throw new Error(`still not done after ${maxSteps} steps`);
      if (!(await this.step())) throw new Error("deadlock: the awaited work waits on nothing the scheduler runs");
    }
    return result;
  }

  private fireDue(): void {
    // Most steps fire nothing: no arrays made for them (a step is the simulation's unit of work).
    if (!this.timers.some((t) => t.at <= this.clock)) return;
    const due = this.timers.filter((t) => t.at <= this.clock && !t.cancelled).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const timer of due) if (!timer.cancelled) timer.callback();
  }
}

/**
 * Lets every queued microtask (and the ones they queue) run: nothing else runs in between. Node
 * runs the microtask queue to its end before the next nextTick callback, so no event-loop turn is
 * paid per step (setImmediate cost a quarter of the simulation's CPU; the same seeds take the same
 * steps either way).
 */
function drain(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}
