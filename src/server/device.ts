// The device flow of `uspark login` (RFC 8628): the device asks for a code, a person approves it on
// the web view's /device page, the device's next poll gets a new scoped token, once. Waiting logins
// live in the store (every replica sees them); only hashes of their codes are kept.

import { randomBytes, randomInt } from "node:crypto";
import type { DeviceLogins, DeviceRequest, Grant, Principal } from "./authority.js";
import { sha256Of } from "./authority.js";
import type { CredentialStore, DeviceLoginChange, DeviceLoginRecord } from "./credentials.js";
import { activeToken, createToken, grantWithin, type TokenSpec } from "./tokens.js";
import { SLOW_DOWN_SECONDS } from "../api/types.js";
import { validateProjectId } from "../api/validate.js";

/** How long a person has to approve a login. */
export const DEVICE_LOGIN_SECONDS = 900;
export const DEFAULT_POLL_SECONDS = 5;
/** Logins waiting at once: far more than people approving, far fewer than a flood of requests. */
export const MAX_WAITING_LOGINS = 1000;
/** A poll this much early is still on time (timers and clocks are not exact). */
const POLL_SLACK_MS = 200;
/** Consonants only (RFC 8628 §6.1): no vowel makes no word, no 0/O or 1/I to confuse. */
const USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;

/** The answer to `POST /api/device/code` (RFC 8628 §3.2). */
export interface DeviceCodeAnswer {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** What a poll of `POST /api/device/token` is answered (RFC 8628 §3.5). */
export type PollAnswer =
  | { kind: "error"; error: "authorization_pending" | "slow_down" | "access_denied" | "expired_token" | "invalid_grant" }
  | { kind: "token"; secret: string; spec: TokenSpec };

/** `abcd efgh`, `ABCD-EFGH` → `ABCDEFGH`; undefined for anything that cannot be a user code. */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, "");
  const valid = code.length === USER_CODE_LENGTH && [...code].every((letter) => USER_CODE_LETTERS.includes(letter));
  return valid ? code : undefined;
}

/** `ABCDEFGH` → `ABCD-EFGH`: two halves are easier to read out and type. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What a poll at `now` answers for `login`, and what becomes of it (pure). */
export function decidePoll(
  login: DeviceLoginRecord | undefined,
  now: number,
): DeviceLoginChange<PollAnswer | { kind: "approved"; spec: TokenSpec }> {
  const error = (code: Extract<PollAnswer, { kind: "error" }>["error"]) => ({ kind: "error" as const, error: code });
  if (!login) return { result: error("invalid_grant") };
  if (login.expiresAt <= now) return { next: null, result: error("expired_token") };
  if (login.state === "denied") return { next: null, result: error("access_denied") };
  if (login.state === "approved" && login.grant) return { next: null, result: { kind: "approved", spec: login.grant } };
  const tooSoon = login.lastPollAt !== undefined && now - login.lastPollAt < login.interval * 1000 - POLL_SLACK_MS;
  if (tooSoon) return { next: { ...login, lastPollAt: now, interval: login.interval + SLOW_DOWN_SECONDS }, result: error("slow_down") };
  return { next: { ...login, lastPollAt: now }, result: error("authorization_pending") };
}

export interface DeviceFlowOptions {
  /** Seconds between polls told to the device (tests shorten it). */
  interval?: number;
  maxWaiting?: number;
  now?: () => number;
}

export class DeviceFlow implements DeviceLogins {
  private readonly interval: number;
  private readonly maxWaiting: number;
  private readonly now: () => number;

  constructor(
    private readonly credentials: CredentialStore,
    options: DeviceFlowOptions = {},
  ) {
    this.interval = options.interval ?? DEFAULT_POLL_SECONDS;
    this.maxWaiting = options.maxWaiting ?? MAX_WAITING_LOGINS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Starts a login; `verificationUri` is the server's /device page as the device reaches it.
   * Undefined while too many logins wait already.
   */
  async start(verificationUri: string, asked?: DeviceRequest): Promise<DeviceCodeAnswer | undefined> {
    const deviceCode = randomBytes(32).toString("base64url");
    const userCode = Array.from({ length: USER_CODE_LENGTH }, () => USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)]).join("");
    const now = this.now();
    const login: DeviceLoginRecord = {
      deviceHash: hashOf(deviceCode),
      userHash: hashOf(userCode),
      expiresAt: now + DEVICE_LOGIN_SECONDS * 1000,
      interval: this.interval,
      state: "pending",
      ...(asked ? { asked } : {}),
    };
    if ((await this.credentials.addDeviceLogin(login, now, this.maxWaiting)) === "full") return undefined;
    const shown = formatUserCode(userCode);
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${shown}`,
      expires_in: DEVICE_LOGIN_SECONDS,
      interval: this.interval,
    };
  }

  /** A poll of the device: an RFC error, or (once) the new token's secret. */
  async poll(deviceCode: string): Promise<PollAnswer> {
    const now = this.now();
    const answer = await this.credentials.changeDeviceLogin({ deviceHash: hashOf(deviceCode) }, (login) => decidePoll(login, now));
    if (answer.kind !== "approved") return answer;
    // The login is gone already: whoever polls again gets invalid_grant, never a second token.
    const { secret } = await createToken(this.credentials, answer.spec, now);
    return { kind: "token", secret, spec: answer.spec };
  }

  async find(userCode: string): Promise<{ userCode: string; expiresAt: number; asked?: DeviceRequest } | undefined> {
    const code = normalizeUserCode(userCode);
    if (code === undefined) return undefined;
    const now = this.now();
    return this.credentials.changeDeviceLogin({ userHash: hashOf(code) }, (login) => ({
      result:
        login && isWaiting(login, now)
          ? { userCode: formatUserCode(code), expiresAt: login.expiresAt, ...(login.asked ? { asked: login.asked } : {}) }
          : undefined,
    }));
  }

  async approve(userCode: string, grant: Grant, by: Principal): Promise<"approved" | "unknown" | "forbidden"> {
    const now = await this.current(by);
    const valid = grant.projects.every((project) => validateProjectId(project) === undefined);
    const spec = now && valid ? grantWithin(grant, now) : undefined;
    if (!spec) return "forbidden";
    return this.settle(userCode, (login) => ({ ...login, state: "approved", grant: spec }), "approved");
  }

  async deny(userCode: string, by: Principal): Promise<"denied" | "unknown" | "forbidden"> {
    const now = await this.current(by);
    if (!now || !mayDeny(now)) return "forbidden";
    return this.settle(userCode, (login) => ({ ...login, state: "denied" }), "denied");
  }

  /** `by` as it stands now: a scoped token read again with its line of parents (undefined once revoked or expired). */
  private async current(by: Principal): Promise<Principal | undefined> {
    if (by.kind === "admin") return by;
    const now = await activeToken(this.credentials, by.tokenHash, this.now());
    return now === "unknown" ? undefined : now;
  }

  /** Changes a waiting login once: a login approved or denied already is no longer waiting ("unknown"). */
  private async settle<T extends string>(
    userCode: string,
    settled: (login: DeviceLoginRecord) => DeviceLoginRecord,
    done: T,
  ): Promise<T | "unknown"> {
    const code = normalizeUserCode(userCode);
    if (code === undefined) return "unknown";
    const now = this.now();
    return this.credentials.changeDeviceLogin<T | "unknown">({ userHash: hashOf(code) }, (login) =>
      login && isWaiting(login, now) ? { next: settled(login), result: done } : { result: "unknown" },
    );
  }
}

/**
 * Whether `by` may deny a waiting login. A login names no project, so only a token that could
 * approve it whatever it asks for (the admin's) may: a scoped token, even a read token of another
 * project, must not end someone else's login (it expires unanswered in 15 minutes anyway).
 */
export function mayDeny(by: Principal): boolean {
  return by.kind === "admin";
}

function isWaiting(login: DeviceLoginRecord, now: number): boolean {
  return login.state === "pending" && login.expiresAt > now;
}

function hashOf(code: string): string {
  return sha256Of(code).toString("hex");
}
