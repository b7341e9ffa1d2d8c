import { pathRefusal } from "../../../src/reconcile/disk-tree.js";
import { LocalChanged, stillAsPlanned, type LocalExpectation, type LocalRead, type LocalStat, type LocalTree, type TreeListing } from "../../../src/reconcile/local-tree.js";
import { sha256 } from "./memory-server.js";

/**
 * A writer's project tree in memory, with a file system's clock: its own offset from the
 * simulation's (a host clock behind or ahead) and an mtime granularity (a rewrite within one tick
 * of the same size keeps size, mtime and inode: the racy stat). A write or delete planned on a
 * hash checks the disk tree's own precondition (stillAsPlanned, local-tree.ts). The user's own
 * edits (edit, mv, cp -p) bypass all that.
 */

export interface MemoryFile {
  bytes: Uint8Array;
  sha256: string;
  mtimeMs: number;
  /** Set by every change, and never back (the file system's clock): what `cp -p` over a file cannot hide. */
  ctimeMs: number;
  ino: number;
}

export interface FileSystemClock {
  now(): number;
  /** Added to the simulation's clock (negative: the file system's clock is behind). */
  offsetMs: number;
  /** mtimes are multiples of this. */
  granularityMs: number;
}

const UTF8 = new TextEncoder();

export class MemoryTree {
  readonly files = new Map<string, MemoryFile>();
  readonly backups = new Map<string, Uint8Array>();
  private nextIno = 1;
  /** pathRefusal's answers (a pure function of the path): every listing asked it again for every file. */
  private readonly refusals = new Map<string, string | undefined>();

  constructor(
    readonly name: string,
    readonly clock: FileSystemClock,
  ) {}

  /** The file system's time now (what an mtime set now is). */
  fsNow(): number {
    const { now, offsetMs, granularityMs } = this.clock;
    return Math.floor((now() + offsetMs) / granularityMs) * granularityMs;
  }

  contents(): Map<string, string> {
    return new Map([...this.files].map(([path, f]) => [path, f.sha256]));
  }

  // The user's edits.

  /** Writes in place (the inode stays), as an editor that truncates and writes does. */
  edit(path: string, text: string): void {
    const bytes = UTF8.encode(text);
    const old = this.files.get(path);
    this.files.set(path, { bytes, sha256: sha256(bytes), mtimeMs: this.fsNow(), ctimeMs: this.fsNow(), ino: old?.ino ?? this.nextIno++ });
  }

  /**
   * `cp -p other path` over an existing file, `rsync -a --inplace`, a reproducible build: new
   * content of the same size written in place, the old mtime set back; only the ctime moves.
   */
  replaceKeepingTimes(path: string, text: string): void {
    const old = this.files.get(path);
    if (!old) return;
    const bytes = UTF8.encode(text.slice(0, old.bytes.length).padEnd(old.bytes.length, "~"));
    if (bytes.length !== old.bytes.length) return; // not one byte a character: leave it
    this.files.set(path, { ...old, bytes, sha256: sha256(bytes), ctimeMs: this.fsNow() });
  }

  delete(path: string): void {
    this.files.delete(path);
  }

  /** `mv from to`: the inode and mtime go with the file. */
  rename(from: string, to: string): void {
    const file = this.files.get(from);
    if (!file) return;
    this.files.delete(from);
    this.files.set(to, { ...file, ctimeMs: this.fsNow() });
  }

  /** `cp -p from to`: a new inode with the old mtime. */
  copyPreserving(from: string, to: string): void {
    const file = this.files.get(from);
    if (file) this.files.set(to, { ...file, ctimeMs: this.fsNow(), ino: this.nextIno++ });
  }

  private refusal(path: string): string | undefined {
    if (!this.refusals.has(path)) this.refusals.set(path, pathRefusal(path));
    return this.refusals.get(path);
  }

  // LocalTree, as the reconcile sees the tree.

  api(gate: (label: string) => Promise<void>): LocalTree {
    const stat = (file: MemoryFile): LocalStat => ({ size: file.bytes.length, mtimeMs: file.mtimeMs, ctimeMs: file.ctimeMs, ino: file.ino });
    const check = async (path: string, expected: LocalExpectation) => {
      const now = this.files.get(path);
      if (!(await stillAsPlanned(expected, now !== undefined, async () => now?.sha256))) throw new LocalChanged("it changed here meanwhile: kept");
    };
    return {
      list: async (): Promise<TreeListing> => {
        await gate("list");
        const files = new Map<string, LocalStat>();
        for (const [path, file] of this.files) if (this.refusal(path) === undefined) files.set(path, stat(file));
        return { files, unrepresentable: [] };
      },
      stat: async (path) => {
        const file = this.files.get(path);
        return file && stat(file);
      },
      read: async (path, keep = 0): Promise<LocalRead> => {
        await gate(`read ${path}`);
        const file = this.files.get(path);
        if (!file) return { kind: "missing" };
        return { kind: "file", sha256: file.sha256, size: file.bytes.length, stat: stat(file), bytes: file.bytes.length <= keep ? new Uint8Array(file.bytes) : undefined };
      },
      outOfScope: (path) => {
        const why = this.refusal(path);
        return why === undefined ? undefined : { reason: why, refused: true };
      },
      write: async (path, bytes, expected) => {
        await gate(`write ${path}`);
        await check(path, expected);
        // Written to a temp file and renamed into place: a new inode.
        const file = { bytes: new Uint8Array(bytes), sha256: sha256(bytes), mtimeMs: this.fsNow(), ctimeMs: this.fsNow(), ino: this.nextIno++ };
        this.files.set(path, file);
        return stat(file);
      },
      remove: async (path, expected) => {
        await gate(`remove ${path}`);
        await check(path, expected);
        this.files.delete(path);
      },
      backup: async (path, label) => {
        const file = this.files.get(path);
        const where = `.uspark/backup/${label}/${path}`;
        if (file) this.backups.set(where, file.bytes);
        return where;
      },
      where: (path) => `/sim/${this.name}/${path}`,
    };
  }
}
