import { idleDeadline } from "../transfer/deadline.js";
import type { ChangeQueue } from "./queue.js";

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
  const reason = `still unsynced when --timeout (${timeoutMs} ms) ran out`;
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
