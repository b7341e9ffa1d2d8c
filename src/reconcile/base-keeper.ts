import type { Reporter } from "../report.js";
import { realTimers, type Timers } from "../sync/queue.js";
import { emptyBase, type Base, type BaseEntry, type BaseKey, type OpenConflict } from "./base.js";
import type { StateStore } from "./state-store.js";

/**
 * The session's copy of the base. It moves per path only when both sides are acknowledged equal
 * at a hash (design.md §1c), and is written back at most every `saveEveryMs` and once at the end:
 * a session of 1,000 commits must not rewrite a 50,000-entry file 1,000 times. A crash before a
 * save costs a re-check, never an edit: the base only ever records what both sides held.
 */

export const SAVE_EVERY_MS = 500;
/**
 * A file modified this shortly before it was read may be modified again within the same mtime
 * tick after the read, keeping size and mtime: its stat is recorded as not to be trusted, so the
 * next scan hashes it once more (and then records a trusted stat).
 */
export const RACY_MS = 2000;

export interface LocalStat {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The stat as the base keeps it: an mtime too close to `readAt` is not trusted. */
export function baseEntry(sha256: string, stat: LocalStat, readAt: number): BaseEntry {
  const racy = readAt - stat.mtimeMs < RACY_MS;
  return { sha256, size: stat.size, mtimeMs: racy ? -1 : stat.mtimeMs, ino: stat.ino };
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
  /** Writes of the state started so far. */
  saves = 0;

  private constructor(
    readonly base: Base,
    private readonly options: BaseKeeperOptions,
  ) {}

  /** Loads the project's base (none, or an unusable one said once: starts empty). */
  static async load(key: BaseKey, options: BaseKeeperOptions): Promise<BaseKeeper> {
    return new BaseKeeper((await options.store.load(key)) ?? emptyBase(key), options);
  }

  /** The base's hash of `path`, `null` when it holds none. */
  sha(path: string): string | null {
    return this.base.files.get(path)?.sha256 ?? null;
  }

  entry(path: string): BaseEntry | undefined {
    return this.base.files.get(path);
  }

  /** Both sides hold `sha256` at `path` (`null`: neither holds it); `stat` is the local file's then. */
  settle(path: string, sha256: string | null, stat?: LocalStat, readAt = this.now()): void {
    if (sha256 === null) {
      if (this.base.files.delete(path)) this.changed();
      this.release(path);
      return;
    }
    const next = stat ? baseEntry(sha256, stat, readAt) : { sha256, size: -1, mtimeMs: -1, ino: -1 };
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
    const snapshot: Base = { ...this.base, files: new Map(this.base.files), conflicts: new Map(this.base.conflicts), held: new Set(this.base.held) };
    this.saving = this.saving
      .then(() => this.options.store.save(snapshot))
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
