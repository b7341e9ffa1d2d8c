import type { Reporter } from "../report.js";
import { realTimers, type Timers } from "../timers.js";
import { emptyBase, type Base, type BaseEntry, type BaseKey, type OpenConflict } from "./base.js";
import type { StateStore } from "./state-store.js";

/**
 * The session's copy of the base. It moves per path only when both sides are acknowledged equal
 * at a hash (docs/sync.md#the-base), and is written back at most every `saveEveryMs` and once at the end:
 * a session of 1,000 commits must not rewrite a 50,000-entry file 1,000 times. A crash before a
 * save costs a re-check, never an edit: the base only ever records what both sides held.
 */

export const SAVE_EVERY_MS = 500;

export interface LocalStat {
  size: number;
  mtimeMs: number;
  ino: number;
}

/**
 * When a stat may be trusted later (then the content is taken as read, unhashed): only when its
 * mtime is older than a mark of the file system's own clock taken before the read, the mtime of
 * the state file as written by a save that completed before it (or as found at load). A file
 * rewritten within its mtime tick after it was read keeps size, mtime and inode; a tick that began
 * before an earlier save is over by the read. Our own clock cannot tell: the file system's may be
 * behind or ahead of it, or tick in whole seconds (simulation seed 7).
 */
export class FileSystemMarks {
  private readonly marks: { knownAt: number; fsMtimeMs: number }[] = [];

  constructor(loadedMtimeMs?: number) {
    if (loadedMtimeMs !== undefined) this.marks.push({ knownAt: -Infinity, fsMtimeMs: loadedMtimeMs });
  }

  /** A save completed at `knownAt` (our clock) and left the state file with this mtime. */
  add(knownAt: number, fsMtimeMs: number): void {
    this.marks.push({ knownAt, fsMtimeMs });
    if (this.marks.length > 64) this.marks.shift();
  }

  /** Whether a stat read at `readAt` (our clock) can be trusted from now on. */
  trusts(stat: LocalStat, readAt: number): boolean {
    for (let i = this.marks.length - 1; i >= 0; i--) {
      const mark = this.marks[i]!;
      if (mark.knownAt <= readAt) return stat.mtimeMs < mark.fsMtimeMs;
    }
    return false;
  }
}

/**
 * Does the file still have the stat the base recorded (then its content is the base's, unhashed)?
 * Not when its mtime is not older than the state file's own (`savedMtimeMs`, the file system's
 * clock, so a skewed clock does not fool it): it may have been rewritten within the same tick
 * after it was read, as git's "racily clean" entries.
 */
export function statMatches(entry: BaseEntry | undefined, stat: LocalStat, savedMtimeMs?: number): boolean {
  if (entry === undefined || entry.mtimeMs < 0 || (savedMtimeMs !== undefined && entry.mtimeMs >= savedMtimeMs)) return false;
  return entry.size === stat.size && entry.mtimeMs === stat.mtimeMs && entry.ino === stat.ino;
}

export interface BaseKeeperOptions {
  store: StateStore;
  report: Reporter;
  timers?: Timers;
  saveEveryMs?: number;
}

export class BaseKeeper {
  private dirty = false;
  private timer: unknown;
  private saving: Promise<void> = Promise.resolve();
  /** The file system's clock, as the state file's mtimes tell it: which stats can be trusted. */
  readonly marks: FileSystemMarks;
  /** Writes of the state started so far. */
  saves = 0;

  private constructor(
    readonly base: Base,
    private readonly options: BaseKeeperOptions,
  ) {
    this.marks = new FileSystemMarks(base.savedMtimeMs);
  }

  /** Loads the project's base (none, or an unusable one said once: starts empty). */
  static async load(key: BaseKey, options: BaseKeeperOptions): Promise<BaseKeeper> {
    return new BaseKeeper((await options.store.load(key)) ?? emptyBase(key), options);
  }

  /** The base's hash of `path`, `null` when it holds none. */
  sha(path: string): string | null {
    return this.base.files.get(path)?.sha256 ?? null;
  }

  /** The base of `path` given what the remote holds: a commit of ours whose answer never came counts once the remote shows it. */
  baseFor(path: string, remote: string | null): string | null {
    const sent = this.base.sent?.get(path);
    return sent !== undefined && sent === remote ? remote : this.sha(path);
  }

  /** The commit was answered (applied, or refused with nothing applied): what it sent is known. */
  answered(paths: readonly string[]): void {
    for (const path of paths) if (this.base.sent?.delete(path)) this.changed();
  }

  /** A commit is about to go out: until it is answered, what it sends may be on the remote. */
  sending(changes: readonly { path: string; sha256: string | null }[]): void {
    this.base.sent ??= new Map();
    for (const { path, sha256 } of changes) this.base.sent.set(path, sha256);
    this.changed();
  }

  entry(path: string): BaseEntry | undefined {
    return this.base.files.get(path);
  }

  /** Both sides hold `sha256` at `path` (`null`: neither holds it); `stat` is the local file's then. */
  settle(path: string, sha256: string | null, stat?: LocalStat, readAt = this.now()): void {
    if (this.base.sent?.delete(path)) this.changed();
    if (sha256 === null) {
      if (this.base.files.delete(path)) this.changed();
      this.release(path);
      return;
    }
    const next = stat ? { sha256, size: stat.size, mtimeMs: this.marks.trusts(stat, readAt) ? stat.mtimeMs : -1, ino: stat.ino } : { sha256, size: -1, mtimeMs: -1, ino: -1 };
    const old = this.base.files.get(path);
    this.release(path);
    if (old && old.sha256 === next.sha256 && old.size === next.size && old.mtimeMs === next.mtimeMs && old.ino === next.ino) return;
    this.base.files.set(path, next);
    this.changed();
  }

  /** The file was hashed and still holds the base's content: remember its stat, so it is not hashed again. */
  refreshStat(path: string, stat: LocalStat, readAt = this.now()): void {
    const old = this.base.files.get(path);
    if (old) this.settle(path, old.sha256, stat, readAt);
  }

  conflict(path: string): OpenConflict | undefined {
    return this.base.conflicts.get(path);
  }

  openConflict(path: string, conflict: OpenConflict): void {
    this.base.conflicts.set(path, conflict);
    this.changed();
  }

  closeConflict(path: string): boolean {
    if (!this.base.conflicts.delete(path)) return false;
    this.changed();
    return true;
  }

  /** The copy paths of the open conflicts: never reconciled while their conflict is open. */
  conflictCopies(): Set<string> {
    return new Set([...this.base.conflicts.values()].map((c) => c.copy));
  }

  isHeld(path: string): boolean {
    return this.base.held.has(path);
  }

  hold(paths: Iterable<string>): void {
    for (const path of paths) if (!this.base.held.has(path)) (this.base.held.add(path), this.changed());
  }

  release(path: string): void {
    if (this.base.held.delete(path)) this.changed();
  }

  /** The remote version the base is now up to. */
  reachVersion(version: number): void {
    if (version <= this.base.version) return;
    this.base.version = version;
    this.changed();
  }

  /**
   * With no state file yet, no stat read could be trusted before the first save (nothing tells the
   * file system's clock): write it now, so that a first push or watch of a large tree is not hashed
   * again by the next one. Not in a dry run (it writes .uspark/state.json).
   */
  async markClock(): Promise<void> {
    if (this.base.savedMtimeMs !== undefined || this.saves > 0) return;
    this.dirty = true;
    this.save();
    await this.saving;
  }

  /** Stops the timer and writes nothing: a dry run (status, diff, --dry-run) leaves the state file as it found it. */
  discard(): void {
    this.timers().clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty = false;
  }

  /** Writes what is not written yet and stops the timer. */
  async close(): Promise<void> {
    this.timers().clearTimeout(this.timer);
    this.timer = undefined;
    this.save();
    await this.saving;
  }

  private changed(): void {
    this.dirty = true;
    this.timer ??= this.timers().setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.options.saveEveryMs ?? SAVE_EVERY_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private save(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.saves++;
    const snapshot: Base = { ...this.base, files: new Map(this.base.files), conflicts: new Map(this.base.conflicts), held: new Set(this.base.held), sent: new Map(this.base.sent ?? []) };
    this.saving = this.saving
      .then(() => this.options.store.save(snapshot))
      .then((fsMtimeMs) => {
        if (typeof fsMtimeMs === "number") this.marks.add(this.now(), fsMtimeMs);
      })
      .catch((error: unknown) => {
        this.options.report.warn("state-write", `could not write the base to .uspark/state.json: ${(error as Error).message}; the next run re-checks by hash`);
      });
  }

  private now(): number {
    return this.timers().now();
  }

  private timers(): Timers {
    return this.options.timers ?? realTimers;
  }
}
