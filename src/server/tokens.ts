// Scoped tokens (docs/access.md#tokens-and-scopes): made, hashed, and recognized. The secret is shown once to whoever
// made it; the store keeps its SHA-256 only.

import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Access, Authority, Grant, Principal } from "./authority.js";
import { sha256Of } from "./authority.js";
import { isStorableTime, type CredentialStore, type TokenParent, type TokenRecord } from "./credentials.js";

/** Says what a leaked string is (secret scanners, a person reading a log) without saying anything of it. */
const SECRET_PREFIX = "uspark_";

export interface TokenSpec {
  projects: readonly string[];
  access: Access;
  /** Epoch milliseconds; none: never expires. */
  expires?: number;
  /** The token that approved the device login this one is made for. */
  parent?: TokenParent;
}

/** Parents followed at most: device logins approved by device tokens, a few levels deep at most in practice. */
const MAX_GENERATIONS = 16;

export function hashOfSecret(secret: string): string {
  return sha256Of(secret).toString("hex");
}

/** Makes a token and stores its hash; the secret is returned, once, to be given to its holder. */
export async function createToken(
  credentials: CredentialStore,
  spec: TokenSpec,
  now: number,
): Promise<{ secret: string; record: TokenRecord }> {
  if (spec.expires !== undefined && !isStorableTime(spec.expires))
    throw new RangeError(`expiry ${spec.expires} is past any date a token may hold`);
  const secret = SECRET_PREFIX + randomBytes(32).toString("base64url");
  const record: TokenRecord = {
    id: randomBytes(6).toString("hex"),
    sha256: hashOfSecret(secret),
    projects: [...new Set(spec.projects)].sort(),
    access: spec.access,
    created: now,
  };
  if (spec.expires !== undefined) record.expires = spec.expires;
  if (spec.parent !== undefined) record.parent = spec.parent;
  await credentials.addToken(record);
  return { secret, record };
}

/** "active", or why the token is refused. */
export function tokenStatus(record: TokenRecord, now: number): "active" | "revoked" | "expired" {
  if (record.revoked !== undefined) return "revoked";
  if (record.expires !== undefined && record.expires <= now) return "expired";
  return "active";
}

/**
 * The admin token and the store's scoped tokens. A token the store knows is judged by the store
 * alone: its scope, or refused once revoked or expired, on every server. Any other token (or none)
 * is the admin on a server started without an admin token (loopback only, open to this machine
 * anyway), and refused on one started with it. The store is read at every request: a revoke by
 * another process or replica is seen at the next one.
 */
export function credentialAuthority(adminToken: string | undefined, credentials: CredentialStore, now: () => number = Date.now): Authority {
  const adminHash = adminToken === undefined ? undefined : sha256Of(adminToken);
  return {
    async identify(token) {
      if (token === undefined) return adminHash === undefined ? { kind: "admin" } : undefined;
      const hash = sha256Of(token);
      // Hashing first evens out lengths: the comparison takes the same time whatever was sent.
      if (adminHash !== undefined && timingSafeEqual(hash, adminHash)) return { kind: "admin" };
      const known = await activeToken(credentials, hash.toString("hex"), now());
      if (known !== "unknown") return known;
      return adminHash === undefined ? { kind: "admin" } : undefined;
    },
  };
}

/**
 * The principal of the token whose secret hashes to `sha256`: undefined when it, or any token up
 * its line of parents, is revoked, expired or gone (a child dies with its parent), "unknown" when
 * the store has no such token. Its expiry is the earliest of its line's.
 */
export async function activeToken(credentials: CredentialStore, sha256: string, now: number): Promise<Principal | undefined | "unknown"> {
  const record = await credentials.tokenByHash(sha256);
  if (!record) return "unknown";
  let expires: number | undefined;
  let line = record;
  for (let generation = 0; ; generation++) {
    if (generation === MAX_GENERATIONS || tokenStatus(line, now) !== "active") return undefined;
    if (line.expires !== undefined) expires = Math.min(expires ?? Infinity, line.expires);
    if (!line.parent) break;
    const parent = await credentials.tokenByHash(line.parent.sha256);
    if (!parent) return undefined; // a parent gone (or damaged): its children go with it
    line = parent;
  }
  const principal: Principal = {
    kind: "scoped",
    tokenId: record.id,
    tokenHash: record.sha256,
    access: record.access,
    projects: record.projects,
  };
  if (expires !== undefined) principal.expires = expires;
  return principal;
}

/**
 * What a token made on behalf of `by` may be given: `grant` when it lies within what `by` may do
 * (same or fewer projects, read under read), never outliving `by`'s own token and a child of it;
 * undefined otherwise.
 */
export function grantWithin(grant: Grant, by: Principal): TokenSpec | undefined {
  if (grant.projects.length === 0) return undefined;
  if (by.kind === "admin") return { projects: grant.projects, access: grant.access };
  if (grant.access === "write" && by.access !== "write") return undefined;
  if (!grant.projects.every((project) => by.projects.includes(project))) return undefined;
  const spec: TokenSpec = { projects: grant.projects, access: grant.access, parent: { id: by.tokenId, sha256: by.tokenHash } };
  if (by.expires !== undefined) spec.expires = by.expires;
  return spec;
}
