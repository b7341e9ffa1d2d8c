import { createHash } from "node:crypto";
import type { Change } from "./types.js";

/**
 * The history hash of API v1.3 (docs/api.md): each commit's chain hash is the SHA-256 of the
 * previous commit's chain hash and this commit's canonical changes, so a client that recorded
 * (version, chain) can tell a server whose history does not extend what it saw (restored from a
 * backup, rolled back, another replica) from one that went on.
 */

/** The chain hash of version 0 (no commit yet): 64 zeros. */
export const ZERO_CHAIN = "0".repeat(64);

/**
 * A commit's changes as the chain hashes them: a JSON array, in the order sent, of
 * `{"op":"put","path":…,"sha256":…,"size":…}` or `{"op":"delete","path":…}`, keys in this
 * (alphabetical) order, no whitespace, strings as JSON.stringify writes them; `expect` and any
 * other member are left out (what a commit did, not what it required).
 */
export function canonicalChanges(changes: readonly Change[]): string {
  const parts = changes.map((c) =>
    c.op === "put"
      ? `{"op":"put","path":${JSON.stringify(c.path)},"sha256":${JSON.stringify(c.sha256)},"size":${c.size}}`
      : `{"op":"delete","path":${JSON.stringify(c.path)}}`,
  );
  return `[${parts.join(",")}]`;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of `<previous chain hash>\n<canonical changes>`. */
export function chainHash(previous: string, changes: readonly Change[]): string {
  return createHash("sha256")
    .update(`${previous}\n${canonicalChanges(changes)}`)
    .digest("hex");
}
