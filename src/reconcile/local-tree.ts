import type { LocalStat } from "./base-keeper.js";
import { UsparkError } from "../errors/base.js";

/**
 * The local side as the reconcile sees it: project paths (after --prefix), never absolute ones.
 * The disk implementation (disk-tree.ts) walks with the one ignore engine and reads and writes
 * without ever leaving the root; the simulation keeps a tree in memory. Every write and delete
 * carries the precondition it was planned on and refuses (LocalChanged) when it no longer holds.
 */

export type { LocalStat };

export type LocalRead =
  | { kind: "file"; sha256: string; size: number; stat: LocalStat; /** kept when small enough */ bytes?: Uint8Array }
  /** No regular file at that path (gone, or a directory now). */
  | { kind: "missing" }
  /** Never read, by policy: a symlink, a special file, a path that now resolves elsewhere. */
  | { kind: "refused"; reason: string }
  | { kind: "too-large"; size: number }
  /** It changed while it was being read; try again later. */
  | { kind: "changed" }
  | { kind: "error"; reason: string };

/** What a local file must still be right before it is replaced or removed (`null`: absent). */
export type LocalExpectation = { sha256: string; stat: LocalStat } | null;

/**
 * Does the local file still hold what a write or delete was planned on (asked right before it
 * happens)? `present`: a regular file is there now; `hash`: reads it. The content decides, never
 * the stat alone: a rewrite within one mtime tick keeps size, mtime and inode, and a file system
 * clock behind ours makes a fresh mtime look old (simulation seed 7). Shared by the disk tree and
 * the simulation's tree, so the simulation checks this very rule.
 */
export async function stillAsPlanned(
  expected: LocalExpectation,
  present: boolean,
  hash: () => Promise<string | undefined>,
): Promise<boolean> {
  if (expected === null) return !present;
  return present && (await hash()) === expected.sha256;
}

/** The local file changed after it was looked at: it is kept, untouched. */
export class LocalChanged extends UsparkError {
  readonly code = "local_changed";
  override readonly name = "LocalChanged";
}

/** The path may not be written here (a symlink or a file in the way, outside the root). */
export class WriteRefused extends UsparkError {
  readonly code = "write_refused";
  override readonly name = "WriteRefused";
}

export interface Unrepresentable {
  remote: string;
  reason: string;
  /** What a warning about it is said once under (a path, or an escaped one). */
  key: string;
}

export interface OutOfScope {
  reason: string;
  /** Never written by any rule (invalid, reserved); false: the user's ignore rules leave it out. */
  refused: boolean;
}

export interface TreeListing {
  /** Every file in scope, by project path: its stat, nothing read. */
  files: Map<string, LocalStat>;
  /** Files under the root the API cannot name (not UTF-8, a backslash, too long). */
  unrepresentable: Unrepresentable[];
}

export interface LocalTree {
  /** Walks the tree (in scope only: ignored, reserved and symlinked paths are not listed). */
  list(signal?: AbortSignal): Promise<TreeListing>;
  /** The stat of a regular file at `path`; "other" for a symlink or special file; undefined when nothing (or a directory) is there. */
  stat(path: string): Promise<LocalStat | "other" | undefined>;
  /** Reads and hashes `path`; the bytes are kept when at most `keepBytesUpTo`. */
  read(path: string, keepBytesUpTo?: number): Promise<LocalRead>;
  /** Why `path` is out of scope now, or undefined: `refused` for a name never written (invalid, in .git/ or .uspark/), else ignored by a rule. */
  outOfScope(path: string): OutOfScope | undefined;
  /** Replaces (or creates) `path` atomically, if it still is `expected`. Returns the new file's stat. */
  write(path: string, bytes: Uint8Array, expected: LocalExpectation): Promise<LocalStat>;
  /** Removes `path`, if it still is `expected`. */
  remove(path: string, expected: NonNullable<LocalExpectation>): Promise<void>;
  /** Keeps a copy of the local file under `.uspark/backup/<label>/<path>`; returns where. */
  backup(path: string, label: string): Promise<string>;
  /** The local path, for messages and the journal. */
  where(path: string): string;
}
