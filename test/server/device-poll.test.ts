// The pure decisions of a device poll (RFC 8628 §3.5) and of user codes.

import { describe, expect, it } from "vitest";
import type { DeviceLoginRecord } from "../../src/server/credentials.js";
import { decidePoll, formatUserCode, normalizeUserCode } from "../../src/server/device.js";

const NOW = 1_800_000_000_000;
const pending: DeviceLoginRecord = { deviceHash: "d", userHash: "u", expiresAt: NOW + 60_000, interval: 5, state: "pending" };

describe("decidePoll", () => {
  it("answers expired_token past the expiry, whatever the state, and drops the login", () => {
    for (const state of ["pending", "approved", "denied"] as const) {
      const login = { ...pending, state, expiresAt: NOW, grant: { projects: ["p"], access: "read" as const } };
      expect(decidePoll(login, NOW)).toEqual({ next: null, result: { kind: "error", error: "expired_token" } });
    }
  });

  it("answers slow_down to a poll inside the interval and adds 5 seconds to it; a poll after it is pending", () => {
    const polled = { ...pending, lastPollAt: NOW - 4_000 };
    expect(decidePoll(polled, NOW)).toEqual({
      next: { ...polled, lastPollAt: NOW, interval: 10 },
      result: { kind: "error", error: "slow_down" },
    });
    const later = { ...pending, lastPollAt: NOW - 5_000 };
    expect(decidePoll(later, NOW)).toEqual({
      next: { ...later, lastPollAt: NOW },
      result: { kind: "error", error: "authorization_pending" },
    });
  });

  it("hands an approved login's grant out and drops the login; no login is invalid_grant", () => {
    const grant = { projects: ["p"], access: "write" as const };
    expect(decidePoll({ ...pending, state: "approved", grant }, NOW)).toEqual({ next: null, result: { kind: "approved", spec: grant } });
    expect(decidePoll(undefined, NOW)).toEqual({ result: { kind: "error", error: "invalid_grant" } });
  });
});

describe("user codes", () => {
  it("are read however a person types them, and only from the consonant alphabet", () => {
    expect(normalizeUserCode("bcdf-ghjk")).toBe("BCDFGHJK");
    expect(normalizeUserCode(" BCDF GHJK ")).toBe("BCDFGHJK");
    expect(normalizeUserCode("ABCD-EFGH")).toBeUndefined(); // vowels are never issued
    expect(normalizeUserCode("BCDF-GHJ")).toBeUndefined();
    expect(formatUserCode("BCDFGHJK")).toBe("BCDF-GHJK");
  });
});
