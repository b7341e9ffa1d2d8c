import { describe, expect, it } from "vitest";
import { ApiError, networkError } from "../../src/transfer/api-error.js";
import {
  backoffCeiling,
  failureReason,
  fullJitter,
  hostOf,
  isRetryableStatus,
  parseRetryAfter,
  retry,
  retryDelay,
  sayWaiting,
  waitingLine,
  WAITING_LINE_EVERY_MS,
  type BackoffPolicy,
} from "../../src/transfer/retry.js";

const policy: BackoffPolicy = { baseMs: 250, capMs: 30_000, retryAfterCapMs: 60_000 };

describe("backoff", () => {
  it("doubles the ceiling per attempt up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffCeiling(a, policy))).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(backoffCeiling(10_000, policy)).toBe(30_000);
  });

  it("full jitter spans [0, ceiling]", () => {
    expect(fullJitter(3, 0, policy)).toBe(0);
    expect(fullJitter(3, 0.5, policy)).toBe(1000);
    expect(fullJitter(3, 0.999999, policy)).toBe(1999);
    expect(fullJitter(50, 0.5, policy)).toBe(15_000);
  });

  it("Retry-After wins over jitter, capped", () => {
    expect(retryDelay(0, 5000, 0.9, policy)).toBe(5000);
    expect(retryDelay(0, 3_600_000, 0.9, policy)).toBe(60_000);
    expect(retryDelay(2, undefined, 0.5, policy)).toBe(500);
    expect(retryDelay(0, -5, 0.5, policy)).toBe(0);
  });

  it("classifies statuses", () => {
    for (const s of [408, 429, 500, 502, 503, 504, 599]) expect(isRetryableStatus(s)).toBe(true);
    for (const s of [200, 301, 400, 401, 403, 404, 409, 413, 422]) expect(isRetryableStatus(s)).toBe(false);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  it("reads delta-seconds", () => {
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfter(["2", "9"], now)).toBe(2000);
  });
  it("reads HTTP dates, a past date is 0", () => {
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0);
  });
  it("ignores what it cannot read", () => {
    for (const v of [undefined, null, "", "soon", "-1", "1e3", "0x10", "12abc"]) expect(parseRetryAfter(v, now)).toBeUndefined();
  });
});

describe("retry()", () => {
  const fast: BackoffPolicy = { baseMs: 1, capMs: 2, retryAfterCapMs: 5 };
  const transient = () => Object.assign(new Error("503"), { retryable: true });

  it("retries transient errors until success", async () => {
    let n = 0;
    const delays: number[] = [];
    const value = await retry(
      async () => {
        if (++n < 4) throw transient();
        return "ok";
      },
      { policy: fast, onRetry: (_e, _a, d) => delays.push(d) },
    );
    expect(value).toBe("ok");
    expect(n).toBe(4);
    expect(delays).toHaveLength(3);
  });

  it("does not retry other errors", async () => {
    let n = 0;
    await expect(
      retry(
        async () => {
          n++;
          throw Object.assign(new Error("400"), { retryable: false });
        },
        { policy: fast },
      ),
    ).rejects.toThrow("400");
    expect(n).toBe(1);
  });

  it("honours Retry-After from the error (capped by the policy)", async () => {
    const delays: number[] = [];
    let n = 0;
    await retry(
      async () => {
        if (++n === 1) throw Object.assign(transient(), { retryAfterMs: 999_999 });
        return 1;
      },
      { policy: fast, onRetry: (_e, _a, d) => delays.push(d) },
    );
    expect(delays).toEqual([5]);
  });

  it("stops at the signal with its reason, also in the middle of a wait", async () => {
    const controller = new AbortController();
    const reason = new Error("deadline");
    let n = 0;
    const running = retry(
      async () => {
        n++;
        if (n === 3) setTimeout(() => controller.abort(reason), 5);
        throw transient();
      },
      { signal: controller.signal, policy: { baseMs: 10_000, capMs: 10_000, retryAfterCapMs: 10_000 }, random: () => 0.0001 },
    );
    await expect(running).rejects.toBe(reason);
    expect(n).toBeGreaterThanOrEqual(3);
  });
});

describe("waiting for <host>", () => {
  const refused = networkError("GET /files", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 30_000);

  it("names the host, the reason in a person's words and the next try", () => {
    expect(waitingLine("127.0.0.1:4400", refused, 2, 4200)).toBe("waiting for 127.0.0.1:4400: connection refused, retry 3 in 4 s");
    expect(waitingLine("h:1", refused, 0, 80)).toBe("waiting for h:1: connection refused, retry 1 in 80 ms");
  });

  it("the first refusal by the default --api-url (127.0.0.1:4400) says what to do: nothing listens there", () => {
    expect(waitingLine("127.0.0.1:4400", refused, 0, 80)).toBe(
      "waiting for 127.0.0.1:4400: connection refused, retry 1 in 80 ms (nothing listens on the default --api-url: start `uspark serve` there, or pass --api-url or set USPARK_API_URL)",
    );
    expect(waitingLine("127.0.0.1:4401", refused, 0, 80)).toBe("waiting for 127.0.0.1:4401: connection refused, retry 1 in 80 ms");
  });

  it("gives fetch's own cause rather than its 'fetch failed'", () => {
    expect(failureReason(new TypeError("fetch failed", { cause: new Error("bad port") }))).toBe("bad port");
    expect(
      failureReason(
        new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) }),
      ),
    ).toBe("connection refused");
  });

  it("reads the network's code, a timeout and an HTTP status", () => {
    const reset = new ApiError("x", { code: "network", retryable: true, cause: { code: "ECONNRESET" } });
    expect(failureReason(reset)).toBe("connection reset");
    expect(failureReason(new ApiError("GET /files: no answer within 30000 ms", { code: "timeout", retryable: true }))).toBe(
      "no answer in time",
    );
    expect(failureReason(new ApiError("GET /files: 503", { status: 503, code: "unavailable", retryable: true }))).toBe("503 unavailable");
  });

  it("is said once a window has passed, or after half of one when the wait would leave two windows silent", () => {
    expect(sayWaiting(Number.POSITIVE_INFINITY, 0)).toBe(true);
    expect(sayWaiting(WAITING_LINE_EVERY_MS, 0)).toBe(true);
    expect(sayWaiting(WAITING_LINE_EVERY_MS - 1, 100)).toBe(false);
    expect(sayWaiting(WAITING_LINE_EVERY_MS / 2 - 1, 60_000)).toBe(false);
    expect(sayWaiting(WAITING_LINE_EVERY_MS / 2, 2 * WAITING_LINE_EVERY_MS)).toBe(true);
  });

  it("names the host and port of the api url, never its credentials", () => {
    expect(hostOf("https://user:secret@api.example.com:8443/v1")).toBe("api.example.com:8443");
    expect(hostOf("not a url")).toBe("the server");
  });
});
