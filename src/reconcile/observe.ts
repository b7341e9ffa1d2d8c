import { mapLimit } from "../util/map-limit.js";
import { realTimers, type Timers } from "../util/timers.js";
import { sameStat, statMatches, type BaseKeeper, type LocalStat } from "./base-keeper.js";
import type { LocalRead, LocalTree } from "./local-tree.js";
import type { LocalFile } from "./plan.js";
import type { Tally, TransferProgress } from "./progress.js";

/**
 * The local side of the paths a round looks at: a stat each, and a hash only when the stat differs
 * from the one the base recorded (or this session last hashed): no mtime guess ever decides what
 * is pushed, and a quiet tree of 50,000 files is stat'ed, never read.
 */

export type Observation =
  | { kind: "file"; file: LocalFile; /** kept from hashing, for the upload */ bytes?: Uint8Array }
  | { kind: "absent" }
  /** Not synced now: too large, a symlink, unreadable (journal: worth retrying later as it is), or changing (retry: soon). */
  | { kind: "unreadable"; reason: string; journal: boolean; retry: boolean; failed: boolean };

export interface ObserverOptions {
  tree: LocalTree;
  base: BaseKeeper;
  maxFileSize: number;
  timers?: Timers;
  /** Files at most this large keep their bytes between hashing and upload. Default 4 MiB. */
  keepBytesUpTo?: number;
  /** All kept bytes of one round together. Default 64 MiB. */
  keepBudget?: number;
  /** Told how far the reading (hashing) of a round's files is: a long push's first phase. */
  onProgress?: TransferProgress;
}

const READ_CONCURRENCY = 8;
const STAT_CONCURRENCY = 32;
const KEEP_BYTES = 4 * 1024 * 1024;
const KEEP_BUDGET = 64 * 1024 * 1024;

interface Hashed {
  stat: LocalStat;
  sha256: string;
  readAt: number;
}

export class Observer {
  /** What this session hashed, by path: a file that is not in sync is not read again until it changes. */
  private readonly hashed = new Map<string, Hashed>();
  /** Files read (and hashed) so far. */
  reads = 0;

  constructor(private readonly options: ObserverOptions) {}

  /**
   * The local state of each path. `listed`: the stats of a full listing (then a path it lacks is
   * looked at once more, since not listed is not gone: a symlink or an unreadable name is not a
   * delete). `fresh`: paths an event named, read whatever their stat says. An abort stops it
   * between two reads (a changed tree of 50,000 files takes a while to hash).
   */
  async observe(
    paths: readonly string[],
    signal: AbortSignal,
    listed?: ReadonlyMap<string, LocalStat>,
    fresh?: ReadonlySet<string>,
  ): Promise<Map<string, Observation>> {
    // Only what the listing did not stat is stat'ed: a promise per listed path is time for nothing.
    const unlisted = listed ? paths.filter((path) => !listed.has(path)) : paths;
    const unlistedStats = await mapLimit(unlisted, STAT_CONCURRENCY, (path) => this.options.tree.stat(path));
    const stats = new Map(unlisted.map((path, i) => [path, unlistedStats[i]]));
    const result = new Map<string, Observation>();
    const toRead: string[] = [];
    let toReadBytes = 0;
    paths.forEach((path) => {
      const stat = listed?.get(path) ?? stats.get(path);
      if (stat === undefined) return void result.set(path, { kind: "absent" });
      if (stat === "other") return void result.set(path, unreadable("not a regular file here (a symlink or a special file)", false));
      // An event says the file was written: a rewrite may keep size and mtime, so it is read.
      const known = fresh?.has(path) ? undefined : this.known(path, stat);
      if (known) return void result.set(path, { kind: "file", file: known });
      toRead.push(path);
      toReadBytes += stat.size;
    });
    let budget = this.options.keepBudget ?? KEEP_BUDGET;
    const progress = this.readProgress({ files: toRead.length, bytes: toReadBytes });
    await mapLimit(toRead, READ_CONCURRENCY, async (path) => {
      signal.throwIfAborted();
      const keep = Math.max(0, Math.min(this.options.keepBytesUpTo ?? KEEP_BYTES, budget));
      const readAt = this.now();
      this.reads++;
      const read = await this.options.tree.read(path, keep);
      if (read.kind === "file" && read.bytes) budget -= read.bytes.length;
      result.set(path, this.toObservation(path, read, readAt));
      progress(read.kind === "file" ? read.size : 0);
    });
    return result;
  }

  /** Counts the files read against all to read (their sizes from the stats); told on each read. */
  private readProgress(total: Tally): (bytes: number) => void {
    const tell = this.options.onProgress;
    const done = { files: 0, bytes: 0 };
    tell?.("reading", done, total); // the clock of the time left starts now
    return (bytes) => {
      done.files++;
      done.bytes = Math.min(total.bytes, done.bytes + bytes);
      tell?.("reading", done, total);
    };
  }

  /** The content without reading, when the stat says it is what the base or this session last saw. */
  private known(path: string, stat: LocalStat): LocalFile | undefined {
    const entry = this.options.base.entry(path);
    if (statMatches(entry, stat, this.options.base.base.savedMtimeMs))
      return { sha256: entry!.sha256, size: stat.size, stat, readAt: this.now() };
    const seen = this.hashed.get(path);
    // Read within its mtime tick: it may have been rewritten since, keeping the stat (base-keeper.ts).
    if (seen && sameStat(seen.stat, stat) && this.options.base.marks.trusts(stat, seen.readAt)) {
      return { sha256: seen.sha256, size: stat.size, stat, readAt: seen.readAt };
    }
    return undefined;
  }

  private toObservation(path: string, read: LocalRead, readAt: number): Observation {
    switch (read.kind) {
      case "file":
        this.hashed.set(path, { stat: read.stat, sha256: read.sha256, readAt });
        if (this.options.base.sha(path) === read.sha256) this.options.base.refreshStat(path, read.stat, readAt);
        return { kind: "file", file: { sha256: read.sha256, size: read.size, stat: read.stat, readAt }, bytes: read.bytes };
      case "missing":
        this.hashed.delete(path);
        return { kind: "absent" };
      case "too-large":
        // Not journaled: `push --pending` under the same limit would only skip it again.
        return unreadable(
          `larger than the ${formatBytes(this.options.maxFileSize)} limit (${formatBytes(read.size)}): raise --max-file-size or --ignore it`,
          false,
        );
      case "refused":
        return unreadable(read.reason, false);
      case "changed":
        return { kind: "unreadable", reason: "it kept changing while it was read", journal: true, retry: true, failed: true };
      case "error":
        return { kind: "unreadable", reason: read.reason, journal: true, retry: false, failed: true };
    }
  }

  private now(): number {
    return (this.options.timers ?? realTimers).now();
  }
}

function unreadable(reason: string, journal: boolean): Observation {
  return { kind: "unreadable", reason, journal, retry: false, failed: false };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MiB`;
}
