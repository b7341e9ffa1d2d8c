import type { ChangeQueue } from "../sync/queue.js";

/**
 * Giving up when nothing goes through: the flush at the end of a session, `uspark pull` and
 * `uspark push --pending` all stop once no request has gone through for a while, except while
 * a large transfer is still within its own hard deadline.
 */

/** Give up after this long without a request going through, ms (--flush-timeout, pull's --timeout). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export interface IdleDeadlineOptions {
  timeoutMs: number;
  /**
   * When the longest transfer under way must end (its hard deadline), if one is under way: until
   * then, time is not up. Without it, the deadline is never extended.
   */
  longTransferDeadline?: () => number | undefined;
  /** Whether a transfer under way may extend the deadline now (default: always). */
  extendWhile?: () => boolean;
  /** Whether a request is under way (or waiting to be retried): time spent on local work alone is not the server's silence. Default: always. */
  waiting?: () => boolean;
  /** Time ran out (called once). */
  expire: () => void;
}

export interface IdleDeadline {
  /** Something went through: the full timeout again, from now. */
  progress(): void;
  /** No more expiry. */
  stop(): void;
}

/**
 * A timer that expires `timeoutMs` after the last progress. When it runs out while a large
 * transfer is under way (within its own hard deadline), it waits for that deadline instead: that
 * transfer is progress, whereas a small request that trickles its answer is not (defect 18).
 */
export function idleDeadline(options: IdleDeadlineOptions): IdleDeadline {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const arm = (ms: number) => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => {
      if (options.waiting?.() === false) return arm(options.timeoutMs);
      const until = options.extendWhile?.() === false ? undefined : options.longTransferDeadline?.();
      const left = until === undefined ? 0 : until - Date.now();
      if (left > 0) return arm(left);
      stopped = true;
      options.expire();
    }, ms);
  };
  arm(options.timeoutMs);
  return {
    progress: () => arm(options.timeoutMs),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The end of input: flush at once and wait for the queue to drain, but no longer than the flush
 * timeout. In idle mode the timeout counts from the last request that went through, so a large
 * transfer within its own hard deadline is not cut off, while a server that stays down, or
 * trickles its answers, still ends it.
 */
export interface DrainOptions {
  queue: Pick<ChangeQueue<unknown>, "drain" | "idle">;
  /** The requests: whether they are failing now, and how to cut their retry waits short. */
  requests: { readonly degraded: boolean; wake(): void };
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
  const { queue, requests, signal, timeoutMs } = options;
  const reason = `still unsynced when the flush timeout (${timeoutMs} ms) ran out`;
  const deadline = idleDeadline({
    timeoutMs,
    // Idle mode: a large transfer under way while nothing fails is progress.
    longTransferDeadline: options.idle ? options.longTransferDeadline : undefined,
    extendWhile: () => !requests.degraded,
    expire: () => options.expire(reason),
  });
  if (options.idle) options.onProgress(() => deadline.progress());
  const aborted = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
  requests.wake(); // a retry waiting out its backoff tries again now
  try {
    await Promise.race([queue.drain(), aborted]);
    // An interrupted batch gives up quickly (its requests and waits are aborted); let it
    // record what it was doing, but never wait long for it.
    if (signal.aborted) await Promise.race([queue.idle(), delay(1000)]);
  } finally {
    deadline.stop();
    options.onProgress(undefined);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
