import type { SyncEngine, SyncTarget } from "./engine.js";
import type { ChangeQueue } from "./queue.js";

/**
 * The end of input: flush at once and wait for the queue to drain, but no longer than the flush
 * timeout. In idle mode the timeout counts from the last request that went through, so a large
 * transfer within its own hard deadline is not cut off, while a server that stays down, or
 * trickles its answers, still ends it.
 */
export interface DrainOptions {
  queue: ChangeQueue<SyncTarget>;
  engine: SyncEngine;
  signal: AbortSignal;
  timeoutMs: number;
  idle: boolean;
  /** When the longest transfer under way must end (its hard deadline), if one is under way. */
  longTransferDeadline: () => number | undefined;
  /** Called with the timer's re-arm while the drain runs (idle mode), undefined after. */
  onProgress: (rearm: (() => void) | undefined) => void;
  /** Time ran out: interrupt what is in flight with this reason. */
  expire: (reason: string) => void;
}

export async function drainWithDeadline(options: DrainOptions): Promise<void> {
  const { queue, engine, signal, timeoutMs } = options;
  const reason = `still unsynced when the flush timeout (${timeoutMs} ms) ran out`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms = timeoutMs) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      // Idle mode: a large transfer under way (within its own hard deadline) while nothing
      // fails is progress; a small request that trickles its answer is not (defect 18).
      const until = options.idle && !engine.degraded ? options.longTransferDeadline() : undefined;
      if (until !== undefined && until > Date.now()) arm(until - Date.now());
      else options.expire(reason);
    }, ms);
  };
  if (options.idle) options.onProgress(() => arm());
  arm();
  const aborted = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  engine.wake(); // a retry waiting out its backoff tries again now
  try {
    await Promise.race([queue.drain(), aborted]);
    // An interrupted batch gives up quickly (its requests and waits are aborted); let it
    // record what it was doing, but never wait long for it.
    if (signal.aborted) await Promise.race([queue.idle(), delay(1000)]);
  } finally {
    clearTimeout(timer);
    options.onProgress(undefined);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
