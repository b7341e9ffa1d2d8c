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

export interface RequestDeadline {
  /** Aborted by the caller's signal (with its reason) or when time is up. */
  signal: AbortSignal;
  /** Whether it was time that aborted it. */
  readonly expired: boolean;
  /** The request is over: the timer and the caller's listener go, nothing fires later. */
  dispose(): void;
}

/**
 * One request's signal: the caller's, cut off after `ms`. A timer and a listener that are undone
 * when the request ends, not AbortSignal.timeout and AbortSignal.any: a timeout signal fires
 * after its request is long over (a TimeoutError made and dispatched for each request of a
 * session that outlives its request timeout), and each any() hangs a dependent on the session's
 * lifelong signal.
 */
export function requestDeadline(outer: AbortSignal | undefined, ms: number): RequestDeadline {
  const controller = new AbortController();
  let expired = false;
  const onOuterAbort = () => controller.abort(outer!.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`the request took longer than ${ms} ms`, "TimeoutError"));
  }, ms);
  timer.unref(); // as AbortSignal.timeout's: a deadline alone keeps no process alive
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener("abort", onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuterAbort);
    },
  };
}
