import { DEFAULT_API_URL } from "../config/config.js";
import type { Reporter } from "../report/reporter.js";
import { realTimers, type Timers } from "../util/timers.js";

/**
 * When to try a request again, and how long to wait first. The maths is pure (pass the random
 * number and the clock) so it is tested with plain values; `retry()` is the loop around it.
 *
 * Policy: network errors, timeouts, 408, 429 and 5xx are transient. They are retried with
 * exponential backoff and full jitter (a uniform wait in [0, min(cap, base·2^attempt)]), or after
 * the server's Retry-After when it sends one (capped, so a server cannot park us for an hour).
 * There is no attempt limit: a transient error never makes us give up while the session runs.
 * The caller's AbortSignal (the end-of-input deadline, or a second Ctrl-C) is the only way out.
 */

export interface BackoffPolicy {
  /** First backoff ceiling, ms. */
  baseMs: number;
  /** Largest backoff ceiling, ms (the exponential growth stops here). */
  capMs: number;
  /** Largest wait we accept from a Retry-After header, ms. */
  retryAfterCapMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 250, capMs: 30_000, retryAfterCapMs: 60_000 };

/** The ceiling of the backoff window for the given attempt (0 = the wait after the first failure). */
export function backoffCeiling(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  // 2^31 overflows nothing in JS but is absurd; the cap is reached long before.
  const exp = Math.min(Math.max(0, Math.floor(attempt)), 30);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exp);
}

/** Full jitter: uniform in [0, ceiling]. `random` is in [0, 1). */
export function fullJitter(attempt: number, random: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const r = Math.min(Math.max(random, 0), 1);
  return Math.floor(r * backoffCeiling(attempt, policy));
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds ("120") or an HTTP date. Undefined when
 * absent or unparsable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined | null, now: number = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (/^\d+\.\d+$/.test(text)) return Math.round(Number(text) * 1000); // lenient: "1.5"
  // An HTTP date names a weekday and a month; plain numbers with signs etc. are rejected above.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * How long to wait before attempt `attempt + 1`: the server's Retry-After (capped) when it gave
 * one, else full jitter.
 */
export function retryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  random: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), policy.retryAfterCapMs);
  return fullJitter(attempt, random, policy);
}

/** Is an HTTP status worth retrying? (Network errors and timeouts are, too; see ApiError.) */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

export interface RetryableError {
  retryable: boolean;
  retryAfterMs?: number;
}

export interface RetryOptions {
  signal?: AbortSignal;
  policy?: BackoffPolicy;
  random?: () => number;
  /** Called before each wait, with the error, the attempt that failed (0-based) and the wait. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** A promise that cuts the current wait short when it resolves (e.g. stdin ended: try now). */
  wake?: () => Promise<void>;
  /** The clock the waits run on (the simulation's virtual one; the real one by default). */
  timers?: Timers;
}

function isRetryable(error: unknown): error is RetryableError {
  return typeof error === "object" && error !== null && (error as RetryableError).retryable === true;
}

/**
 * Runs `attempt` until it succeeds, a non-transient error is thrown, or the signal aborts (then
 * the signal's reason is thrown). The function is given the signal to pass on to its request.
 */
export async function retry<T>(run: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { signal, policy = DEFAULT_BACKOFF, random = Math.random } = options;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await run(attempt);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!isRetryable(error)) throw error;
      const delay = retryDelay(attempt, error.retryAfterMs, random(), policy);
      options.onRetry?.(error, attempt, delay);
      await sleep(delay, signal, options.wake?.(), options.timers);
    }
  }
}

export interface RetryingCallerOptions {
  report: Reporter;
  policy?: BackoffPolicy;
  /** Cuts a retry's wait short when it resolves (e.g. stdin ended: try now). */
  wake?: () => Promise<void>;
  /** A request went through (after its retries, if it needed any). */
  onProgress?: () => void;
  /** A call started while none was under way: the server's silence counts from now. */
  onStart?: () => void;
  /** The server's host (and port), named in "waiting for <host>: …". */
  host: string;
  /** Said (info, event `recovered`) when requests go through again after failing; "<host> answers again" by default. */
  recovered?: string;
  /** The clock and the randomness of the waits (a seeded simulation replays exactly). */
  timers?: Timers;
  random?: () => number;
}

/** At most one "waiting for <host>" line this often: a failing server is said, never shouted. */
export const WAITING_LINE_EVERY_MS = 4000;

/** A small request without an answer this long is said ("no answer for 3 s"): a server that hangs, not one that refuses. */
export const SILENT_AFTER_MS = 3000;

export interface CallOptions {
  /**
   * Say "waiting for <host>: no answer …" when this call has had no answer for SILENT_AFTER_MS
   * plus this long (a long poll's own wait; what a blob transfer's bytes take at the slowest rate
   * allowed). Unset: never.
   */
  answerExpectedWithinMs?: number;
}

/**
 * A session's requests, each retried under one policy. While they fail, "waiting for <host>:
 * <reason>, retry <n> in <wait>" is said as a warning at once and then as `sayWaiting` allows (the
 * other retries at debug level); once a request goes through again, that is said once.
 */
export class RetryingCaller {
  private failing = false;
  private calls = 0;
  private lastSaidAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: RetryingCallerOptions) {}

  /** True while a call is under way (a request, or the wait before its retry). */
  get busy(): boolean {
    return this.calls > 0;
  }

  /** True while requests fail and are being retried (since the last success). */
  get degraded(): boolean {
    return this.failing;
  }

  async call<T>(run: () => Promise<T>, signal: AbortSignal, options: CallOptions = {}): Promise<T> {
    if (this.calls++ === 0) this.options.onStart?.();
    const silence =
      options.answerExpectedWithinMs === undefined ? undefined : this.watchSilence(SILENT_AFTER_MS + options.answerExpectedWithinMs);
    try {
      return await this.callWithRetries(run, signal);
    } finally {
      this.calls--;
      silence?.();
    }
  }

  /** Says "no answer for N s" each time `afterMs` passes without the call ending (as `sayWaiting` allows); returns the stop. */
  private watchSilence(afterMs: number): () => void {
    const timers = this.options.timers ?? realTimers;
    const startedAt = timers.now();
    let handle: unknown;
    const arm = () => {
      handle = timers.setTimeout(() => {
        const now = timers.now();
        if (!this.failing && sayWaiting(now - this.lastSaidAt, afterMs)) {
          this.lastSaidAt = now;
          this.options.report.warn("waiting", `waiting for ${this.options.host}: no answer for ${formatWait(now - startedAt)}`, {
            host: this.options.host,
            waitedMs: now - startedAt,
          });
        }
        arm();
      }, afterMs);
      (handle as { unref?: () => void }).unref?.(); // the request holds the process open, not this
    };
    arm();
    return () => timers.clearTimeout(handle);
  }

  private async callWithRetries<T>(run: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const { report, host } = this.options;
    const result = await retry(run, {
      signal,
      policy: this.options.policy,
      wake: this.options.wake,
      timers: this.options.timers,
      random: this.options.random,
      onRetry: (error, attempt, delay) => {
        const failure = error as { code?: unknown; status?: unknown; message?: unknown };
        const fields = { host, attempt: attempt + 1, delayMs: delay, code: failure.code, status: failure.status, error: failure.message };
        const now = (this.options.timers ?? realTimers).now();
        const line = waitingLine(host, error, attempt, delay);
        this.failing = true;
        if (!sayWaiting(now - this.lastSaidAt, delay)) return report.debug("retry", line, fields);
        this.lastSaidAt = now;
        report.warn("retry", line, fields);
      },
    });
    if (this.failing) {
      this.failing = false;
      this.lastSaidAt = Number.NEGATIVE_INFINITY;
      report.info("recovered", this.options.recovered ?? `${host} answers again`, { host });
    }
    this.options.onProgress?.();
    return result;
  }
}

/**
 * Whether this retry's "waiting for" line is said, `sinceLastMs` after the last one: once a window
 * has passed; or, after half a window, when keeping quiet would leave the person two windows
 * without news (the wait is long).
 */
export function sayWaiting(sinceLastMs: number, delayMs: number): boolean {
  if (sinceLastMs >= WAITING_LINE_EVERY_MS) return true;
  return sinceLastMs >= WAITING_LINE_EVERY_MS / 2 && sinceLastMs + delayMs >= 2 * WAITING_LINE_EVERY_MS;
}

/** "waiting for <host>: connection refused, retry 3 in 4 s": what failed, and what happens next. */
export function waitingLine(host: string, error: unknown, attempt: number, delayMs: number): string {
  const reason = failureReason(error);
  // A first command run with no server given and none started: say what the address is.
  const hint = attempt === 0 && reason === "connection refused" && host === hostOf(DEFAULT_API_URL) ? DEFAULT_REFUSED_HINT : "";
  return `waiting for ${host}: ${reason}, retry ${attempt + 1} in ${formatWait(delayMs)}${hint}`;
}

const DEFAULT_REFUSED_HINT =
  " (nothing listens on the default --api-url: start `uspark serve` there, or pass --api-url or set USPARK_API_URL)";

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS)",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  CONNECT_TIMEOUT: "connection timed out",
};

/** A failed request's reason in a person's words: the network's, the timeout's or the HTTP status. */
export function failureReason(error: unknown): string {
  const failure = error as {
    code?: unknown;
    status?: unknown;
    message?: unknown;
    cause?: { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  };
  if (typeof failure.status === "number")
    return typeof failure.code === "string" ? `${failure.status} ${failure.code}` : `HTTP ${failure.status}`;
  const cause = failure.cause?.code ?? failure.cause?.cause?.code;
  if (typeof cause === "string" && NETWORK_REASONS[cause]) return NETWORK_REASONS[cause];
  if (failure.code === "timeout") return "no answer in time";
  // fetch() says only "fetch failed"; its cause says what did.
  if (failure.message === "fetch failed" && typeof failure.cause?.message === "string") return failure.cause.message;
  return typeof failure.message === "string" ? failure.message : String(error);
}

/** The host and port of an API url, as "waiting for <host>" names it (credentials never). */
export function hostOf(apiUrl: string): string {
  try {
    return new URL(apiUrl).host;
  } catch {
    return "the server";
  }
}

/** "80 ms", "4 s": a wait as a person reads it. */
function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/**
 * setTimeout as a promise that rejects with the signal's reason when it aborts, and resolves
 * early when `wake` resolves.
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: Promise<void>, timers: Timers = realTimers): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      timers.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () => finish(signal!.reason ?? new Error("aborted"));
    const timer = timers.setTimeout(() => finish(), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    void wake?.then(() => finish());
  });
}
