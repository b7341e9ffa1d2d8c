/**
 * The one decision per path (docs/sync.md#the-reconcile), shared by push, pull, every scan, the watch and status:
 * given what this machine last saw both sides agree on (the base), what the tree holds now (local)
 * and what the project holds now (remote), what should happen to the path. Pure: three hashes in,
 * one action out; the truth table is test/reconcile/reconcile.test.ts.
 *
 * A side is a sha256, or `null` when the path is absent there. A path the base never held has base
 * `null` too: "no base" and "absent when last synced" call for the same rows.
 */

export type Sha = string | null;

export type Decision =
  /** Both sides hold the same content (or neither holds the path): nothing to send, the base follows. */
  | { kind: "in-sync" }
  /** The remote changed and the local side did not: write `sha` here (`null`: delete here). */
  | { kind: "pull"; sha: Sha }
  /**
   * The local side changed and the remote did not (or deleted what was edited here): commit
   * `sha` (`null`: a delete) on condition that the remote still holds `expect`.
   */
  | { kind: "push"; sha: Sha; expect: Sha }
  /** Both changed, differently, and both still hold content: keep both (a conflict copy). */
  | { kind: "conflict"; local: string; remote: string };

export function reconcile(base: Sha, local: Sha, remote: Sha): Decision {
  if (local === remote) return { kind: "in-sync" };
  if (local === base) return { kind: "pull", sha: remote };
  if (remote === base) return { kind: "push", sha: local, expect: remote };
  // Both moved away from the base. An edit beats a delete, in both directions.
  if (local === null) return { kind: "pull", sha: remote };
  if (remote === null) return { kind: "push", sha: local, expect: null };
  return { kind: "conflict", local, remote };
}

/**
 * What a side does with a decision: a push sends only, a pull writes only, a two-way watch does
 * both; status does neither (it reports). A conflict is handled the same way by every mode that
 * changes something (a copy of the local version is committed next to the remote file).
 */
export type Mode = "push" | "pull" | "two-way";

/** Whether `mode` carries out `decision` (in-sync and conflicts are every mode's business). */
export function acts(mode: Mode, decision: Decision): boolean {
  if (decision.kind === "push") return mode !== "pull";
  if (decision.kind === "pull") return mode !== "push";
  return true;
}
