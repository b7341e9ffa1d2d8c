import { pathRefusal } from "../../../src/reconcile/disk-tree.js";
import {
  LocalChanged,
  stillAsPlanned,
  WriteRefused,
  type LocalExpectation,
  type LocalRead,
  type LocalStat,
  type LocalTree,
  type TreeListing,
} from "../../../src/reconcile/local-tree.js";
import { sha256 } from "./memory-server.js";

/**
 * A writer's project tree in memory, with a file system's clock: its own offset from the
 * simulation's (a host clock behind or ahead) and an mtime granularity (a rewrite within one tick
 * of the same size keeps size, mtime and inode: the racy stat). A write or delete planned on a
 * hash checks the disk tree's own precondition (stillAsPlanned, local-tree.ts). The user's own
 * edits (edit, mv, cp -p) bypass all that.
 *
 * A path is a file or a directory, never both: a directory is there while a file is under it (an
 * emptied one goes, as a pull's removeEmptiedParents leaves none). A write where a file is above
 * the path, or a directory is in its place, is refused as the disk tree refuses it (disk-write.ts:
 * WriteRefused); a user's edit there fails (ENOTDIR, EISDIR) and changes nothing.
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
  /** Each directory, with the number of files under it (at any depth). */
  private readonly dirs = new Map<string, number>();
  readonly backups = new Map<string, Uint8Array>();
  /** The hashes of what backups hold (a restore keeps a local edit there before it writes). */
  readonly backedUp = new Set<string>();
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

  /** Why a file cannot be made at `path` (a file above it, a directory in its place), or undefined. */
  blocked(path: string): string | undefined {
    if (this.dirs.has(path)) return "a directory is in its place here";
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
      if (this.files.has(path.slice(0, i))) return `${path.slice(0, i)} is a file here, not a directory`;
    }
    return undefined;
  }

  private put(path: string, file: MemoryFile): void {
    if (!this.files.has(path)) this.countDirs(path, 1);
    this.files.set(path, file);
  }

  private remove(path: string): void {
    if (this.files.delete(path)) this.countDirs(path, -1);
  }

  private countDirs(path: string, by: 1 | -1): void {
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      const n = (this.dirs.get(dir) ?? 0) + by;
      if (n === 0) this.dirs.delete(dir);
      else this.dirs.set(dir, n);
    }
  }

  // The user's edits: false when the file system refuses it (nothing changed).

  /** Writes in place (the inode stays), as an editor that truncates and writes does. */
  edit(path: string, text: string): boolean {
    if (this.blocked(path)) return false;
    const bytes = UTF8.encode(text);
    const old = this.files.get(path);
    this.put(path, { bytes, sha256: sha256(bytes), mtimeMs: this.fsNow(), ctimeMs: this.fsNow(), ino: old?.ino ?? this.nextIno++ });
    return true;
  }

  /** `rm x && mkdir x && echo … > x/<name>`: the file `x` becomes a directory holding one file. */
  fileToDir(path: string, name: string, text: string): boolean {
    if (!this.files.has(path)) return false;
    this.remove(path);
    return this.edit(`${path}/${name}`, text);
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
    this.remove(path);
  }

  /** `mv from to`: the inode and mtime go with the file. */
  rename(from: string, to: string): boolean {
    const file = this.files.get(from);
    if (!file || this.blocked(to)) return false;
    this.remove(from);
    this.put(to, { ...file, ctimeMs: this.fsNow() });
    return true;
  }

  /** `cp -p from to`: a new inode with the old mtime. */
  copyPreserving(from: string, to: string): boolean {
    const file = this.files.get(from);
    if (!file || this.blocked(to)) return false;
    this.put(to, { ...file, ctimeMs: this.fsNow(), ino: this.nextIno++ });
    return true;
  }

  private refusal(path: string): string | undefined {
    if (!this.refusals.has(path)) this.refusals.set(path, pathRefusal(path));
    return this.refusals.get(path);
  }

  // LocalTree, as the reconcile sees the tree.

  api(gate: (label: string) => Promise<void>): LocalTree {
    const stat = (file: MemoryFile): LocalStat => ({
      size: file.bytes.length,
      mtimeMs: file.mtimeMs,
      ctimeMs: file.ctimeMs,
      ino: file.ino,
    });
    const check = async (path: string, expected: LocalExpectation) => {
      const now = this.files.get(path);
      if (!(await stillAsPlanned(expected, now !== undefined, async () => now?.sha256)))
        throw new LocalChanged("it changed here meanwhile: kept");
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
        return {
          kind: "file",
          sha256: file.sha256,
          size: file.bytes.length,
          stat: stat(file),
          bytes: file.bytes.length <= keep ? new Uint8Array(file.bytes) : undefined,
        };
      },
      outOfScope: (path) => {
        const why = this.refusal(path);
        return why === undefined ? undefined : { reason: why, refused: true };
      },
      write: async (path, bytes, expected) => {
        await gate(`write ${path}`);
        const refused = this.blocked(path);
        if (refused) throw new WriteRefused(refused);
        await check(path, expected);
        // Written to a temp file and renamed into place: a new inode.
        const file = {
          bytes: new Uint8Array(bytes),
          sha256: sha256(bytes),
          mtimeMs: this.fsNow(),
          ctimeMs: this.fsNow(),
          ino: this.nextIno++,
        };
        this.put(path, file);
        return stat(file);
      },
      remove: async (path, expected) => {
        await gate(`remove ${path}`);
        await check(path, expected);
        this.remove(path);
      },
      backup: async (path, label) => {
        const file = this.files.get(path);
        const where = `.uspark/backup/${label}/${path}`;
        if (file) (this.backups.set(where, file.bytes), this.backedUp.add(file.sha256));
        return where;
      },
      where: (path) => `/sim/${this.name}/${path}`,
    };
  }
}
