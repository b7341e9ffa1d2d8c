/**
 * The pure half of a scan: which paths of the tree differ from the base. No I/O: the snapshot
 * and the base are plain values, and so is the answer.
 */

export interface SnapshotEntry {
  size: number;
  mtimeMs: number;
  /** Present when the scan hashed the file (it does for every path the base knows). */
  sha256?: string;
  /** The inode, for the scanner's hash cache. */
  ino?: number;
}

/** Remote path → what is on disk there. */
export type TreeSnapshot = ReadonlyMap<string, SnapshotEntry>;

export interface DiffBase {
  /** Remote path → sha256 last synced or pulled. */
  files: ReadonlyMap<string, string>;
  /** False when `files` holds only what was synced: then unknown files are new only if recent. */
  complete: boolean;
  /** An unknown file modified at or after this (ms) is new, when the base is not complete. */
  since: number;
}

export interface DiffTarget {
  remote: string;
  kind: "write" | "delete";
}

/**
 * Every local file whose content differs from the base (an unhashed one differs), every file the
 * base does not know (with an incomplete base: only if modified at or after `since`, or if it holds
 * the content of a base file that is gone: a rename, which keeps the old mtime), and every base
 * file that is gone (a delete).
 */
export function diffTree(snapshot: TreeSnapshot, base: DiffBase): DiffTarget[] {
  const gone = goneFromBase(snapshot, base);
  const goneContent = new Set(gone.map((remote) => base.files.get(remote)));
  const targets: DiffTarget[] = [];
  for (const [remote, entry] of snapshot) {
    const known = base.files.get(remote);
    const changed =
      known !== undefined
        ? entry.sha256 !== known
        : base.complete || entry.mtimeMs >= base.since || (entry.sha256 !== undefined && goneContent.has(entry.sha256));
    if (changed) targets.push({ remote, kind: "write" });
  }
  for (const remote of gone) targets.push({ remote, kind: "delete" });
  return targets;
}

/** The base's files the tree no longer has. */
export function goneFromBase(snapshot: TreeSnapshot, base: DiffBase): string[] {
  return [...base.files.keys()].filter((remote) => !snapshot.has(remote));
}

/**
 * The files whose hash the diff needs besides the base's own: with an incomplete base and a base
 * file gone, the unknown ones too old to count as new (one may be the gone file, renamed).
 */
export function renameCandidates(snapshot: TreeSnapshot, base: DiffBase): string[] {
  if (base.complete || goneFromBase(snapshot, base).length === 0) return [];
  return [...snapshot].filter(([remote, entry]) => !base.files.has(remote) && entry.mtimeMs < base.since && entry.sha256 === undefined).map(([remote]) => remote);
}
