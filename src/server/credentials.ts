// What both stores keep of scoped tokens and waiting device logins (docs/access.md#tokens-and-scopes). No secret is
// kept: a token is found by the SHA-256 of its secret, a device login by that of its device code.

import type { Access, DeviceRequest, Grant } from "./authority.js";

/** The token that approved a device login: its child lives only as long as it does. */
export interface TokenParent {
  id: string;
  /** SHA-256 of the parent's secret: where its record is found. */
  sha256: string;
}

/** A token made by `uspark serve token create` or by an approved device login. */
export interface TokenRecord {
  /** Public name (`token list`, `token revoke <id>`), never the secret. */
  id: string;
  /** SHA-256 of the secret, lowercase hex. */
  sha256: string;
  projects: string[];
  access: Access;
  /** Epoch milliseconds. */
  created: number;
  expires?: number;
  /** Kept after a revoke, so that a revoked token is told apart from an unknown one (and listed). */
  revoked?: number;
  /** Set on a token made by a device login a scoped token approved (an admin's approval makes none). */
  parent?: TokenParent;
}

/** A device login (RFC 8628) between `POST /api/device/code` and the device getting its token. */
export interface DeviceLoginRecord {
  /** SHA-256 of the device code, hex: the device's polls find the login by it. */
  deviceHash: string;
  /** SHA-256 of the normalized user code, hex: the approval page finds the login by it. */
  userHash: string;
  expiresAt: number;
  /** Seconds the device must wait between polls (raised by slow_down). */
  interval: number;
  lastPollAt?: number;
  state: "pending" | "denied" | "approved";
  /** Set once approved: what the token the device gets may do, and its parent. */
  grant?: Grant & { expires?: number; parent?: TokenParent };
  /** What the device asked for (`uspark login --project … --scope …`) and its host name: the approval page proposes it. */
  asked?: DeviceRequest;
}

/** Finds one device login: by device code (the device's polls) or by user code (the approval page). */
export type DeviceLoginKey = { deviceHash: string } | { userHash: string };

/** What a change of a device login decides: its next record (null: delete it; undefined: keep it), and an answer. */
export interface DeviceLoginChange<T> {
  next?: DeviceLoginRecord | null;
  result: T;
}

export interface CredentialStore {
  addToken(record: TokenRecord): Promise<void>;
  /** Read from the store at every call (another process may have revoked it): never cached. */
  tokenByHash(sha256: string): Promise<TokenRecord | undefined>;
  /** Every token, revoked ones included, oldest first; records that cannot be read are counted apart (`token list` says so). */
  tokens(): Promise<{ tokens: TokenRecord[]; damaged: number }>;
  /** Marks the token revoked; "unknown" when no token has this id. */
  revokeToken(id: string, at: number): Promise<"revoked" | "unknown">;
  /**
   * Drops the logins expired before `now`, then stores the new one unless `max` are waiting
   * already ("full": anyone may ask for a code, the store must not fill up with them).
   */
  addDeviceLogin(record: DeviceLoginRecord, now: number, max: number): Promise<"added" | "full">;
  /** Runs `change` on the login (undefined when none) with no other change of it in between. */
  changeDeviceLogin<T>(key: DeviceLoginKey, change: (login: DeviceLoginRecord | undefined) => DeviceLoginChange<T>): Promise<T>;
}

/** The latest time a Date holds (ECMA-262 §21.4.1.22): a time past it cannot be printed or compared as a date. */
export const MAX_DATE_MS = 8.64e15;

/** A time a record may hold: an integer of epoch milliseconds a Date can show. */
export function isStorableTime(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && Math.abs(n) <= MAX_DATE_MS;
}

/** A record read back from storage, checked field by field: a damaged one counts as absent. */
export function parseTokenRecord(value: unknown): TokenRecord | undefined {
  const r = value as Partial<TokenRecord> | null;
  if (typeof r !== "object" || r === null) return undefined;
  const optionalNumber = (n: unknown) => n === undefined || isStorableTime(n);
  const parent = r.parent as Partial<TokenParent> | undefined;
  const ok =
    typeof r.id === "string" &&
    typeof r.sha256 === "string" &&
    Array.isArray(r.projects) &&
    r.projects.every((p) => typeof p === "string") &&
    (r.access === "read" || r.access === "write") &&
    isStorableTime(r.created) &&
    optionalNumber(r.expires) &&
    optionalNumber(r.revoked) &&
    (parent === undefined ||
      (typeof parent === "object" && parent !== null && typeof parent.id === "string" && typeof parent.sha256 === "string"));
  return ok ? (r as TokenRecord) : undefined;
}
