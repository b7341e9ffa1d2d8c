import type { Change } from "../api/types.js";
import type { Reporter } from "../report/reporter.js";
import { realTimers, type Timers } from "../util/timers.js";
import { emptyBase, type Base, type BaseEntry, type BaseKey, type OpenConflict } from "./base.js";
import { mirrorOf, sameMirror, type RemotePicture } from "./mirror.js";
import type { Intent, StateStore } from "./state-store.js";
import { errorText } from "../errors/text.js";

/**
 * The session's copy of the base. It moves per path only when both sides are acknowledged equal
 * at a hash (docs/sync.md#the-base). Its changes are written back path by path (merged into the state
 * file as it is then, so processes sharing the tree keep each other's entries), at most every
 * `saveEveryMs` and once at the end: a session of 1,000 commits must not rewrite a 50,000-entry
 * file 1,000 times. No durability hangs on that timer: a commit's intent is written (fsync)
 * before it is sent and removed only once the base that records its answer is saved, so a crash
 * anywhere leaves the intent to settle (intents.ts); a lost pull or settle costs a re-check by
 * hash, never an edit: the base only ever records what both sides held.
 */

export const SAVE_EVERY_MS = 500;

/**
 * A file's stat as the base keeps it, as git's index does: what a rewrite changes. A file
 * replaced in place at the same size and mtime (`cp -p`, `rsync -a --inplace`, a reproducible
 * build) keeps size, mtime and inode but not its ctime, which no one can set back. The times are
 * Node's milliseconds with their fraction (to about half a microsecond). The optional fields are
 * absent in a stat of an older state file (then it matches nothing and the file is hashed once).
 */
export interface LocalStat {
  size: number;
  mtimeMs: number;
  ino: number;
  ctimeMs?: number;
  dev?: number;
  mode?: number;
}

/** The stat the base keeps of a file system stat. */
export function localStatOf(stat: { size: number; mtimeMs: number; ino: number; ctimeMs: number; dev: number; mode: number }): LocalStat {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, ctimeMs: stat.ctimeMs, dev: stat.dev, mode: stat.mode };
}

/**
 * When the file last changed, as far as its stat tells: its ctime too, since an mtime can be set
 * back (`cp -p`) and a rewrite in place within the ctime's tick keeps the whole stat.
 */
function lastChange(stat: LocalStat): number {
  return Math.max(stat.mtimeMs, stat.ctimeMs ?? stat.mtimeMs);
}

/** The same stat: nothing a write would change has changed. */
export function sameStat(a: LocalStat, b: LocalStat): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.ctimeMs === b.ctimeMs && a.dev === b.dev && a.mode === b.mode;
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
      if (mark.knownAt <= readAt) return lastChange(stat) < mark.fsMtimeMs;
    }
    return false;
  }
}

/**
 * Does the file still have the stat the base recorded (then its content is the base's, unhashed)?
 * Not when its mtime or ctime is not older than the state file's own (`savedMtimeMs`, the file
 * system's clock, so a skewed clock does not fool it): it may have been rewritten within the same
 * tick after it was read, as git's "racily clean" entries.
 */
export function statMatches(entry: BaseEntry | undefined, stat: LocalStat, savedMtimeMs?: number): boolean {
  if (entry === undefined || entry.mtimeMs < 0 || (savedMtimeMs !== undefined && lastChange(entry) >= savedMtimeMs)) return false;
  return sameStat(entry, stat);
}

export interface BaseKeeperOptions {
  store: StateStore;
  report: Reporter;
  timers?: Timers;
  saveEveryMs?: number;
}

export class BaseKeeper {
  private dirty = false;
  /** Paths whose entries changed since the last save: what the next save merges into the state file. */
  private touched = new Set<string>();
  /** Intents whose commit was answered and applied: removed once a save has recorded the answer. */
  private answeredKeys: string[] = [];
  /** Keys of the commits sent and not answered yet: their intents must stay, whatever removal is queued. */
  private readonly inFlight = new Set<string>();
  /** Intents left by a process that is gone, as found at load: to settle (intents.ts). */
  openIntents: Intent[] = [];
  private timer: unknown;
  private saving: Promise<void> = Promise.resolve();
  /** A write is queued behind the one in progress and has not taken its copy of the base yet. */
  private queued = false;
  /** The file system's clock, as the state file's mtimes tell it: which stats can be trusted. */
  readonly marks: FileSystemMarks;
  /** Writes of the state started so far. */
  saves = 0;
  /** The remote as the session's view pictures it: a save records the mirror point it has with the base (mirror.ts). */
  private picture: (() => RemotePicture) | undefined;
  /** No path's entry has changed since the load: the loaded mirror point still describes `base.files`. */
  private untouched = true;

  private constructor(
    readonly base: Base,
    private readonly options: BaseKeeperOptions,
  ) {
    this.marks = new FileSystemMarks(base.savedMtimeMs);
  }

  /**
   * Loads the project's base (none, or an unusable one said once: starts empty), and the intents
   * a process that is gone left: until they are settled, what each sent counts as the base once
   * the remote shows it (where the base has not moved since).
   */
  static async load(key: BaseKey, options: BaseKeeperOptions): Promise<BaseKeeper> {
    const keeper = new BaseKeeper((await options.store.load(key)) ?? emptyBase(key), options);
    keeper.openIntents = await options.store.openIntents(keeper.key());
    for (const intent of keeper.openIntents) {
      for (const change of baseChanges(intent)) {
        if (keeper.unmovedSince(intent, change.path))
          (keeper.base.sent ??= new Map()).set(change.path, change.op === "put" ? change.sha256 : null);
      }
    }
    return keeper;
  }

  /** The view whose picture each save compares with the base (mirror.ts). */
  pictureFrom(picture: () => RemotePicture): void {
    this.picture = picture;
  }

  /**
   * The loaded mirror point and the files it holds for, while no entry has changed since the
   * load: what a view may start from instead of a listing (remote-view.ts).
   */
  loadedMirror(): { point: NonNullable<Base["mirror"]>; files: ReadonlyMap<string, BaseEntry> } | undefined {
    const point = this.base.mirror;
    return point && this.untouched ? { point, files: this.base.files } : undefined;
  }

  /** The project this base is of. */
  key(): BaseKey {
    return { apiUrl: this.base.apiUrl, projectId: this.base.projectId, prefix: this.base.prefix };
  }

  /**
   * Whether the base of `path` has not moved on since the intent was written (then its commit's
   * answer is the base's next step): it is as it was then, or none was ever saved (a pull just
   * before the commit, lost with the process).
   */
  private unmovedSince(intent: Intent, path: string): boolean {
    const now = this.sha(path);
    return now === null || now === (intent.bases[path] ?? null);
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

  /**
   * The commit of `key` was answered: applied (its intent goes once the base that records the
   * answer is saved), or refused with nothing applied (its intent goes now).
   */
  answered(key: string, paths: readonly string[], applied: boolean): void {
    this.inFlight.delete(key);
    for (const path of paths) if (this.base.sent?.delete(path)) this.touch(path);
    if (applied) {
      this.answeredKeys.push(key);
      this.changed();
    } else this.afterSaves(() => this.removeIntentUnlessSent(key));
  }

  /** A refused commit may go again under its key (422, the blobs then uploaded): its intent is that one's then. */
  private async removeIntentUnlessSent(key: string): Promise<void> {
    if (!this.inFlight.has(key)) await this.options.store.removeIntent(key);
  }

  /**
   * A commit is about to go out: its intent is durable first (a crash after this can have applied
   * it), and until it is answered, what it sends may be on the remote.
   */
  async sending(intent: Omit<Intent, "project" | "bases">): Promise<void> {
    const bases = Object.fromEntries(intent.changes.map((c) => [c.path, this.sha(c.path)]));
    this.inFlight.add(intent.key);
    await this.options.store.writeIntent({ ...intent, project: this.key(), bases });
    this.base.sent ??= new Map();
    for (const change of intent.changes) this.base.sent.set(change.path, change.op === "put" ? change.sha256 : null);
  }

  /**
   * A replay of an open intent's key answered: applied at some version (now or before), so its
   * paths hold what it sent wherever the base had not moved since; or refused, nothing applied.
   */
  settleIntent(intent: Intent, applied: boolean): void {
    this.openIntents = this.openIntents.filter((i) => i !== intent);
    for (const change of baseChanges(intent)) {
      if (applied && this.unmovedSince(intent, change.path)) this.settle(change.path, change.op === "put" ? change.sha256 : null);
      else if (this.base.sent?.delete(change.path)) this.touch(change.path);
    }
    this.answered(intent.key, [], applied);
  }

  entry(path: string): BaseEntry | undefined {
    return this.base.files.get(path);
  }

  /** Both sides hold `sha256` at `path` (`null`: neither holds it); `stat` is the local file's then. */
  settle(path: string, sha256: string | null, stat?: LocalStat, readAt = this.now()): void {
    if (this.base.sent?.delete(path)) this.touch(path);
    if (sha256 === null) {
      if (this.base.files.delete(path)) this.touch(path);
      this.release(path);
      return;
    }
    const mtimeMs = stat ? (this.marks.trusts(stat, readAt) ? stat.mtimeMs : -1) : -1;
    const old = this.base.files.get(path);
    this.release(path);
    // A round of a quiet tree settles every path as it was: no entry is made to be thrown away.
    if (
      old &&
      stat &&
      old.sha256 === sha256 &&
      old.mtimeMs === mtimeMs &&
      old.size === stat.size &&
      old.ino === stat.ino &&
      old.ctimeMs === stat.ctimeMs &&
      old.dev === stat.dev &&
      old.mode === stat.mode
    )
      return;
    const next: BaseEntry = stat ? { ...stat, sha256, mtimeMs } : { sha256, size: -1, mtimeMs: -1, ino: -1 };
    if (old && old.sha256 === next.sha256 && sameStat(old, next)) return;
    this.base.files.set(path, next);
    this.touch(path);
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
    this.touch(path);
  }

  closeConflict(path: string): boolean {
    if (!this.base.conflicts.delete(path)) return false;
    this.touch(path);
    return true;
  }

  /** The copy paths of the open conflicts: never reconciled while their conflict is open. */
  conflictCopies(): Set<string> {
    return new Set([...this.base.conflicts.values()].flatMap((c) => (c.copy === undefined ? [] : [c.copy])));
  }

  isHeld(path: string): boolean {
    return this.base.held.has(path);
  }

  hold(paths: Iterable<string>): void {
    for (const path of paths) if (!this.base.held.has(path)) (this.base.held.add(path), this.touch(path));
  }

  release(path: string): void {
    if (this.base.held.delete(path)) this.touch(path);
  }

  /** The remote version the base is now up to, with the server's chain hash there when it told it (v1.3). */
  reachVersion(version: number, chain?: string): void {
    if (version < this.base.version || (version === this.base.version && (chain === undefined || chain === this.base.chain))) return;
    if (version > this.base.version || this.base.chain === undefined) this.setHead(version, chain);
  }

  /** Takes the server's history as it is now (uspark push --onto-rewound): its head and chain hash replace what the state file holds. */
  accept(version: number, chain: string | undefined): void {
    this.base.historyTaken = true;
    this.setHead(version, chain);
  }

  private setHead(version: number, chain: string | undefined): void {
    this.base.version = version;
    if (chain === undefined) delete this.base.chain;
    else this.base.chain = chain;
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
    // A tree found in sync is worth one write: the next command then needs no listing.
    if (!sameMirror(this.base.mirror, this.mirrorNow(this.base.files))) this.dirty = true;
    this.save();
    await this.saving;
  }

  private touch(path: string): void {
    this.untouched = false;
    this.touched.add(path);
    this.changed();
  }

  /** Runs `work` after the saves started so far (a failure is the next run's to redo). */
  private afterSaves(work: () => Promise<void>): void {
    this.saving = this.saving.then(work).catch(() => undefined);
  }

  private changed(): void {
    this.dirty = true;
    this.timer ??= this.timers().setTimeout(() => {
      this.timer = undefined;
      this.save();
    }, this.options.saveEveryMs ?? SAVE_EVERY_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /**
   * Queues a write of the base. One waits at most, and takes its copy of the base when it starts:
   * behind a slow save (a 50,000-entry state file on a loaded machine) the intervals that passed
   * meanwhile are one write, not a copy of the base each, written in turn.
   */
  private save(): void {
    if (!this.dirty || this.queued) return;
    this.queued = true;
    this.saving = this.saving.then(() => this.write());
  }

  /** Writes the base as it is now with the paths touched since the last write; the intents it records go once it is written. */
  private async write(): Promise<void> {
    this.queued = false;
    if (!this.dirty) return;
    this.dirty = false;
    this.saves++;
    const mirror = this.mirrorNow(this.base.files);
    const snapshot: Base = {
      ...this.base,
      files: new Map(this.base.files),
      conflicts: new Map(this.base.conflicts),
      held: new Set(this.base.held),
      sent: new Map(this.base.sent ?? []),
    };
    if (mirror === undefined) delete snapshot.mirror;
    else snapshot.mirror = mirror;
    this.base.mirror = mirror;
    const paths = this.touched;
    const keys = this.answeredKeys;
    this.touched = new Set();
    this.answeredKeys = [];
    try {
      const fsMtimeMs = await this.options.store.save(snapshot, paths);
      if (typeof fsMtimeMs === "number") this.marks.add(this.now(), fsMtimeMs);
      for (const key of keys) await this.removeIntentUnlessSent(key);
    } catch (error) {
      // Not written: the next save tries these paths again, and the intents stay until then.
      for (const path of paths) this.touched.add(path);
      this.answeredKeys.push(...keys);
      this.options.report.warn(
        "state-write",
        `could not write the base to .uspark/state.json: ${errorText(error)}; the next run re-checks by hash`,
      );
    }
  }

  /** The mirror point these files have with the view's picture now, if any. */
  private mirrorNow(files: ReadonlyMap<string, BaseEntry>): Base["mirror"] {
    const picture = this.picture?.();
    return picture && mirrorOf(files, picture);
  }

  private now(): number {
    return this.timers().now();
  }

  private timers(): Timers {
    return this.options.timers ?? realTimers;
  }
}

/** An intent's changes of base paths (its conflict copies are not). */
function baseChanges(intent: Intent): Change[] {
  const copies = new Set(intent.copies);
  return intent.changes.filter((change) => !copies.has(change.path));
}
