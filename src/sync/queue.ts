import type { Timers } from "../util/timers.js";
import { realTimers } from "../util/timers.js";

/**
 * The change queue: coalesces changes per key (the remote path; the last value wins) and hands
 * them to `flush` in batches. A batch is flushed after `debounceMs` without a new change, or
 * `maxWaitMs` after its first change, whichever comes first, or at once when it holds `maxBatch`
 * keys. At most one flush runs at a time; changes that arrive during a flush wait for the next
 * batch. No I/O here: the clock is injectable and `flush` is the caller's.
 */

export interface ChangeQueueOptions<T> {
  debounceMs: number;
  maxWaitMs: number;
  /** Largest batch; a fuller queue is flushed at once, in several batches. Default 1000. */
  maxBatch?: number;
  /** Syncs one batch. It should not throw; if it does, `onError` hears about it. */
  flush: (batch: Map<string, T>) => Promise<void>;
  onError?: (error: unknown) => void;
  timers?: Timers;
}

export class ChangeQueue<T> {
  private readonly pending = new Map<string, T>();
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly maxBatch: number;
  private readonly timers: Timers;
  private firstAt: number | undefined;
  private lastAt: number | undefined;
  private timer: unknown;
  private inFlight: Promise<void> | undefined;
  private current: Map<string, T> | undefined;
  private busy = false;
  private immediate = 0;
  private closed = false;

  constructor(private readonly options: ChangeQueueOptions<T>) {
    this.debounceMs = Math.max(0, options.debounceMs);
    this.maxWaitMs = Math.max(0, options.maxWaitMs);
    this.maxBatch = Math.max(1, options.maxBatch ?? 1000);
    this.timers = options.timers ?? realTimers;
  }

  /** Queues a change; an earlier change with the same key is replaced. */
  add(key: string, value: T): void {
    if (this.closed) return;
    const now = this.timers.now();
    if (this.pending.size === 0) this.firstAt = now;
    this.lastAt = now;
    this.pending.delete(key); // re-insert: the batch keeps the order of the last changes
    this.pending.set(key, value);
    this.schedule();
  }

  /** Keys waiting for a flush (not counting the one in flight). */
  get size(): number {
    return this.pending.size;
  }

  get flushing(): boolean {
    return this.busy;
  }

  /**
   * What waits for the next flush under `key`. A look-up, not a copy of the queue: the session
   * asks on every change it is handed (hundreds a session, with a batch's worth waiting).
   */
  waiting(key: string): T | undefined {
    return this.pending.get(key);
  }

  /** The batch being flushed right now, if any. */
  peekInFlight(): Map<string, T> | undefined {
    return this.current && new Map(this.current);
  }

  /** Removes and returns everything waiting (not the batch in flight). */
  takePending(): Map<string, T> {
    const taken = new Map(this.pending);
    this.pending.clear();
    this.firstAt = this.lastAt = undefined;
    this.clearTimer();
    return taken;
  }

  /**
   * Flushes at once (no debounce) until nothing waits and nothing is in flight, including
   * changes added while it drains. Resolves when the queue is idle.
   */
  async drain(): Promise<void> {
    this.immediate++;
    try {
      for (;;) {
        if (this.inFlight) {
          await this.inFlight;
          continue;
        }
        if (this.pending.size === 0 || this.closed) return;
        this.flushNow();
      }
    } finally {
      this.immediate--;
    }
  }

  /** Resolves when the batch in flight (if any) has settled. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** No more timers or flushes; `add` is ignored. What waits stays for `takePending`. */
  close(): void {
    this.closed = true;
    this.clearTimer();
  }

  private schedule(): void {
    if (this.closed || this.busy) return; // re-examined when the flight lands
    if (this.pending.size === 0) {
      this.clearTimer();
      return;
    }
    const now = this.timers.now();
    const dueAt = this.dueAt();
    if (this.immediate > 0 || this.pending.size >= this.maxBatch || now >= dueAt) {
      this.clearTimer();
      this.flushNow();
      return;
    }
    this.clearTimer();
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, dueAt - now);
  }

  private dueAt(): number {
    const quietAt = (this.lastAt ?? 0) + this.debounceMs;
    const maxAt = (this.firstAt ?? 0) + this.maxWaitMs;
    return Math.min(quietAt, maxAt);
  }

  private flushNow(): void {
    if (this.busy || this.pending.size === 0) return;
    const batch = new Map<string, T>();
    for (const [key, value] of this.pending) {
      if (batch.size >= this.maxBatch) break;
      batch.set(key, value);
    }
    for (const key of batch.keys()) this.pending.delete(key);
    // What is left over (a batch larger than maxBatch) keeps its old timestamps: it is due.
    if (this.pending.size === 0) this.firstAt = this.lastAt = undefined;
    this.current = batch;
    this.busy = true; // before `flush` runs: it may add() synchronously
    const run = async () => {
      try {
        await this.options.flush(batch);
      } catch (error) {
        this.options.onError?.(error);
      }
    };
    this.inFlight = run().finally(() => {
      this.inFlight = undefined;
      this.current = undefined;
      this.busy = false;
      this.schedule();
    });
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
