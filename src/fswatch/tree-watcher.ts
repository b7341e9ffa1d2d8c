import { envFlag } from "../config/config.js";
import { lstatSync, readdir, realpathSync, watch, type Dirent } from "node:fs";
import path from "node:path";
import type { FileChange } from "../agents/types.js";
import { IgnoreEngine } from "../ignore/engine.js";
import type { Reporter } from "../report/reporter.js";
import { BurstDetector, burstThreshold } from "./burst.js";
import { CookieBarrier, type WatchDirectory } from "./cookie.js";
import { utf8Name, warnNotUtf8 } from "../paths/names.js";
import { Poller } from "./poller.js";
import { drain } from "./pool.js";
import { readProc, Trouble } from "./trouble.js";
import {
  addChild,
  changedSince,
  childPath,
  describeError,
  findNode,
  forEachNode,
  isGone,
  makeNode,
  probe,
  signature,
  type DirNode,
} from "./tree.js";
import type { FsWatcher, FsWatcherOptions, FsWatcherStats, SettleOptions } from "./types.js";

export const SETTLE_QUIET_MS = 150;
export const SETTLE_MAX_MS = 5000;
export const DEFAULT_POLL_MS = 1000;
/** The cookie comes back in a millisecond or two; past this, something is wrong with the watch. */
const COOKIE_MAX_MS = 1000;
/** Events for one path within this window are looked at once, in their final state. */
const COALESCE_MS = 20;
/** Directory listings in flight at once (libuv has 4 threads by default). */
const LIST_CONCURRENCY = 8;

/**
 * How a directory is listed. "initial": the first walk, nothing is a change. "new": a directory
 * that appeared, every file is a change. "rescan": files are compared with what was last seen
 * (after a .gitignore changed, or a burst that may have overflowed the kernel's queue).
 * "replaced": the same, and the directory is watched anew (an event on its name: it may be a new
 * directory on a reused inode, whose old watch is dead).
 */
type ScanMode = "initial" | "new" | "rescan" | "replaced";

/** One `fs.watch` (one inotify watch) per directory that is not ignored; see ../fswatch.ts. */
export class TreeWatcher implements FsWatcher {
  readonly ready: Promise<void>;
  readonly mode: "events" | "poll";
  private readonly report: Reporter;
  private readonly onChange: (change: FileChange) => void;
  private ignore: IgnoreEngine | undefined;
  private readonly watchDirectory: WatchDirectory;
  private readonly interval: number;
  private readonly trouble: Trouble;
  private readonly poller: Poller;
  private readonly burst = new BurstDetector(burstThreshold(Number(readProc("fs/inotify/max_queued_events")) || undefined));
  private cookies: CookieBarrier | undefined;
  private root: DirNode | undefined;
  private closed = false;
  /** Paths with events not looked at yet, per directory. */
  private dirty = new Map<DirNode, Set<string>>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** Walks, rescans and poll rounds in flight. */
  private pending = 0;
  private lastActivity = 0;
  private rescanning: Promise<void> | undefined;
  private rescanAgain = false;

  constructor(private readonly options: FsWatcherOptions) {
    this.report = options.report;
    this.onChange = options.onChange;
    this.ignore = options.ignoreEngine;
    this.watchDirectory = options.watchDirectory ?? ((dir, listener) => watch(dir, { persistent: false, encoding: "buffer" }, listener));
    const envPolling = envFlag(process.env.CHOKIDAR_USEPOLLING);
    const envInterval = Number(process.env.CHOKIDAR_INTERVAL);
    this.mode = (options.poll !== undefined && options.poll > 0) || envPolling ? "poll" : "events";
    this.interval =
      options.poll !== undefined && options.poll > 0
        ? options.poll
        : Number.isFinite(envInterval) && envInterval > 0
          ? envInterval
          : DEFAULT_POLL_MS;
    this.trouble = new Trouble(this.report, this.interval);
    this.poller = new Poller(
      this.interval,
      LIST_CONCURRENCY,
      (node, done) => this.pollDir(node, done),
      (work) => this.track(work),
    );
    // Not even the few synchronous reads of the start run before the caller's next I/O.
    // Never rejects: nobody has to await it, and an unhandled rejection would end the process.
    this.ready = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.start())
      .catch((error: unknown) => this.report.warn("fswatch", `the file system watcher stopped: ${describeError(error)}`));
  }

  private async start(): Promise<void> {
    if (this.closed) return;
    const started = performance.now();
    let rootPath = path.resolve(this.options.root);
    try {
      rootPath = realpathSync.native(rootPath);
      if (!lstatSync(rootPath).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    } catch (error) {
      this.report.warn("fswatch", `cannot watch ${rootPath}: ${describeError(error)}; only the agent's own events are seen`, {
        path: rootPath,
      });
      return;
    }
    this.ignore ??= new IgnoreEngine({ root: rootPath, ignore: this.options.ignore });
    // The policy may read a changed .gitignore before the watcher's event for it comes.
    this.ignore.onRulesChanged((dirRel) => this.rulesChanged(dirRel));
    this.cookies = new CookieBarrier(rootPath, this.watchDirectory);
    this.root = makeNode(undefined, "", rootPath);
    await this.tracked(this.walk(this.root, "initial"));
    if (this.closed) return;
    this.poller.start();
    if (this.mode === "events") await this.cookies.arm();
    const stats = this.stats();
    const how =
      this.mode === "poll"
        ? `polling every ${this.interval} ms`
        : stats.polledDirs > 0
          ? `${stats.polledDirs} of them polled`
          : "native events";
    this.report.debug(
      "fswatch",
      `watching ${stats.dirs} directories, ${stats.files} files (${how}), ready in ${Math.round(performance.now() - started)} ms`,
      {
        ...stats,
        mode: this.mode,
      },
    );
  }

  async settle(options: SettleOptions = {}): Promise<boolean> {
    if (this.closed) return false;
    const deadline = performance.now() + (options.maxMs ?? SETTLE_MAX_MS);
    await withDeadline(this.ready, deadline);
    if (this.closed || !this.root) return false;
    await withDeadline(this.poller.now(), deadline);
    let passed = false;
    if (this.mode === "events") {
      passed = await this.cookies!.pass(Math.max(0, Math.min(COOKIE_MAX_MS, deadline - performance.now())));
      if (!passed) await this.quiet(options.quietMs ?? SETTLE_QUIET_MS, deadline);
    }
    this.flushNow();
    if (this.burst.takeSuspicion()) this.rescanAll("a burst of events, some may have been dropped");
    while (performance.now() < deadline && !this.closed) {
      if (this.dirty.size > 0) this.flushNow();
      if (this.pending === 0) return passed && this.stats().polledDirs === 0 && !this.trouble.any;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return false;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.flushTimer);
    this.dirty.clear();
    this.poller.stop();
    this.cookies?.close();
    if (this.root) forEachNode(this.root, (node) => this.unwatch(node));
  }

  stats(): FsWatcherStats {
    const stats: FsWatcherStats = { dirs: 0, files: 0, polledDirs: 0 };
    if (this.root && !this.closed)
      forEachNode(this.root, (node) => {
        stats.dirs++;
        stats.files += node.files.size;
        if (node.polled) stats.polledDirs++;
      });
    return stats;
  }

  // ── walking ─────────────────────────────────────────────────────────────────────────────────

  /** Lists `top` and every directory below it that is not ignored, watching each before listing it. */
  private walk(top: DirNode, mode: ScanMode): Promise<void> {
    return drain<[DirNode, ScanMode]>([[top, mode]], LIST_CONCURRENCY, ([node, how], done) => this.scanDir(node, how, done));
  }

  private scanDir(node: DirNode, mode: ScanMode, done: (more?: [DirNode, ScanMode][]) => void): void {
    if (!this.live(node)) return done();
    if (mode === "replaced" || (!node.watcher && !node.polled)) {
      const st = probe(node.abs);
      // Gone or replaced by a file already: the parent's events say so.
      if (!st || !st.isDirectory()) return done();
      // Watch first, list second: nothing created in between is missed.
      if (!node.polled) this.watchDir(node);
    }
    const listedAt = Date.now();
    readdir(node.abs, { withFileTypes: true, encoding: "buffer" }, (error, entries) => {
      if (!this.live(node)) return done();
      if (error) {
        this.trouble.unreadable(node, error);
        return done();
      }
      const more = this.takeEntries(node, entries, mode);
      node.listedAt = listedAt;
      done(more);
    });
  }

  /** Records the entries of a listing; returns the directories to list next. */
  private takeEntries(node: DirNode, entries: Dirent<Buffer>[], mode: ScanMode): [DirNode, ScanMode][] {
    const more: [DirNode, ScanMode][] = [];
    const seen = new Set<string>();
    for (const entry of entries) {
      const checked = utf8Name(entry.name);
      if (!checked.valid) {
        if (entry.isFile() || entry.isDirectory()) this.cannotSync(node, checked.escaped, entry.isDirectory());
        continue;
      }
      const name = checked.name;
      seen.add(name);
      if (entry.isFile()) this.takeFile(node, name, mode);
      else if (entry.isDirectory()) {
        const next = this.takeDir(node, name, mode);
        if (next) more.push(next);
      }
      // Symlinks are never followed and never reported; sockets, fifos and devices neither.
    }
    if (mode === "rescan" || mode === "replaced")
      for (const name of [...node.files.keys(), ...node.dirs.keys()]) if (!seen.has(name) && this.live(node)) this.checkEntry(node, name);
    return more;
  }

  private takeFile(node: DirNode, name: string, mode: ScanMode): void {
    if (this.ignored(node, name, false)) return;
    if (mode === "initial" && !node.polled) {
      node.files.set(name, null);
      return;
    }
    // The listing may be older than an event already handled: believe lstat, not it.
    const st = probe(childPath(node, name));
    if (!st?.isFile()) return;
    const before = node.files.get(name);
    node.files.set(name, signature(st));
    if (mode !== "initial" && changedSince(before, st, node.listedAt)) this.emit(node, name, "write");
  }

  private takeDir(node: DirNode, name: string, mode: ScanMode): [DirNode, ScanMode] | undefined {
    const known = node.dirs.get(name);
    if (known) return mode === "rescan" || mode === "replaced" ? [known, mode] : undefined;
    if (this.ignored(node, name, true)) return undefined;
    return [addChild(node, name), mode === "initial" ? "initial" : "new"];
  }

  private ignored(node: DirNode, name: string, isDir: boolean): boolean {
    return this.ignore!.checkEntry(node.rel, name, isDir) !== undefined;
  }

  /** Forgets a directory and everything below it, reporting its known files as deleted if `announce`. */
  private removeDir(node: DirNode, announce: boolean): void {
    if (node.parent?.dirs.get(node.name) === node) node.parent.dirs.delete(node.name);
    forEachNode(node, (each) => {
      if (announce) for (const name of each.files.keys()) this.emit(each, name, "delete");
      each.files.clear();
      each.removed = true;
      this.unwatch(each);
      this.dirty.delete(each);
    });
  }

  private unwatch(node: DirNode): void {
    node.watcher?.close();
    node.watcher = undefined;
    this.poller.delete(node);
  }

  private live(node: DirNode): boolean {
    return !this.closed && !node.removed;
  }

  private track(work: Promise<void>): void {
    void this.tracked(work);
  }

  private async tracked(work: Promise<void>): Promise<void> {
    this.pending++;
    try {
      await work;
    } finally {
      this.pending--;
    }
  }

  // ── changes ─────────────────────────────────────────────────────────────────────────────────

  /** Compares one entry with what is known of it, and reports the difference. */
  private checkEntry(node: DirNode, name: string): void {
    const st = probe(childPath(node, name));
    // Cannot tell (EACCES, EIO…): a file that cannot be stat'ed is not a deleted file.
    if (st === undefined) return;
    const knownDir = node.dirs.get(name);
    if (st?.isDirectory()) {
      if (node.files.has(name)) this.forgetFile(node, name);
      // Known: `rm -rf d && mkdir d` may have put a new directory on the old inode: list it again.
      if (knownDir) return this.track(this.walk(knownDir, "replaced"));
      if (!this.ignored(node, name, true)) this.track(this.walk(addChild(node, name), "new"));
      return;
    }
    if (knownDir) this.removeDir(knownDir, true);
    if (name === ".gitignore") this.ignore!.reload(node.rel);
    if (st?.isFile()) {
      if (this.ignored(node, name, false)) return;
      const before = node.files.get(name);
      node.files.set(name, signature(st));
      if (!node.polled || changedSince(before, st, node.listedAt)) this.emit(node, name, "write");
      return;
    }
    // Missing, or now a symlink, socket…: what was a file here is gone.
    if (node.files.has(name)) this.forgetFile(node, name);
  }

  private forgetFile(node: DirNode, name: string): void {
    node.files.delete(name);
    this.emit(node, name, "delete");
  }

  private emit(node: DirNode, name: string, kind: FileChange["kind"]): void {
    if (this.closed) return;
    this.lastActivity = performance.now();
    try {
      this.onChange({ path: childPath(node, name), kind, cause: "fs", confirmed: true });
    } catch (error) {
      this.trouble.once("callback", "fswatch", `a file change handler failed: ${describeError(error)}`);
    }
  }

  /**
   * A name that is not valid UTF-8 can never be a project path: said once for the run (under the
   * same key as the scans' walk, which also counts it as not synced). Said here too for a dry run,
   * which has no scans.
   */
  private cannotSync(node: DirNode, escaped: string, isDir: boolean): void {
    if (this.ignored(node, escaped, isDir)) return;
    warnNotUtf8(this.report, this.root!.abs, `${node.rel === "" ? "" : `${node.rel}/`}${escaped}${isDir ? "/" : ""}`);
  }

  // ── .gitignore ──────────────────────────────────────────────────────────────────────────────

  /** A .gitignore changed: what it now ignores is forgotten quietly, what it no longer ignores is reported. */
  private rulesChanged(dirRel: string): void {
    const node = this.root && !this.closed ? findNode(this.root, dirRel) : undefined;
    if (!node) return; // not watched: an ignored directory, or one not listed yet
    const trim = (dir: DirNode) => {
      for (const name of [...dir.files.keys()]) if (this.ignored(dir, name, false)) dir.files.delete(name);
      for (const child of [...dir.dirs.values()]) {
        if (this.ignored(dir, child.name, true)) this.removeDir(child, false);
        else trim(child);
      }
    };
    trim(node);
    this.report.debug("fswatch", `${node.rel === "" ? "" : `${node.rel}/`}.gitignore changed: applying its rules from now on`);
    this.track(this.walk(node, "rescan"));
  }

  /** Compares the whole tree with what was last seen (a rescan already running is run once more). */
  private rescanAll(reason: string): void {
    if (!this.root || this.closed) return;
    if (this.rescanning) {
      this.rescanAgain = true;
      return;
    }
    this.report.debug("fswatch", `rescanning the tree: ${reason}`);
    const root = this.root;
    const run = async () => {
      do {
        this.rescanAgain = false;
        await this.walk(root, "rescan");
      } while (this.rescanAgain && !this.closed);
    };
    this.rescanning = run().finally(() => {
      this.rescanning = undefined;
    });
    this.track(this.rescanning);
  }

  // ── native events ───────────────────────────────────────────────────────────────────────────

  private watchDir(node: DirNode): void {
    if (this.mode === "poll") return this.pollDirectory(node);
    try {
      const watcher = this.watchDirectory(node.abs, (event, name) => this.onEvent(node, event, name));
      watcher.on("error", (error) => this.watchError(node, error));
      // The new watch first, then the old one goes: no moment without one.
      const old = node.watcher;
      node.watcher = watcher;
      old?.close();
    } catch (error) {
      this.watchFailed(node, error);
    }
  }

  private onEvent(node: DirNode, event: string, filename: Buffer | string | null): void {
    if (!this.live(node)) return;
    this.lastActivity = performance.now();
    this.burst.event();
    if (filename === null) {
      // Linux always names the entry; elsewhere, compare the whole directory.
      this.track(new Promise<void>((resolve) => this.pollDir(node, resolve)));
      return;
    }
    const checked = typeof filename === "string" ? ({ valid: true, name: filename } as const) : utf8Name(filename);
    if (!checked.valid) {
      const st = typeof filename === "string" ? undefined : probe(Buffer.concat([Buffer.from(node.abs + path.sep), filename]));
      if (st?.isFile() || st?.isDirectory()) this.cannotSync(node, checked.escaped, st.isDirectory());
      return;
    }
    // The watched directory itself was removed or moved (its own name): its parent finds out how.
    if (event === "rename" && checked.name === node.name && node.parent) this.markDirty(node.parent, node.name);
    this.markDirty(node, checked.name);
  }

  private markDirty(node: DirNode, name: string): void {
    let names = this.dirty.get(node);
    if (!names) this.dirty.set(node, (names = new Set()));
    names.add(name);
    this.flushTimer ??= setTimeout(() => this.flush(), COALESCE_MS);
  }

  /** Looks at each path that had events, once, in its state now. */
  private flush(): void {
    this.flushTimer = undefined;
    const dirty = this.dirty;
    this.dirty = new Map();
    for (const [node, names] of dirty) for (const name of names) if (this.live(node)) this.checkEntry(node, name);
    const burst = this.burst.windowEnd();
    if (burst === "rescan") this.rescanAll("a burst of events, some may have been dropped");
    // Look once more after the burst, even if no event comes.
    else if (burst === "wait") this.flushTimer ??= setTimeout(() => this.flush(), COALESCE_MS);
  }

  private flushNow(): void {
    clearTimeout(this.flushTimer);
    this.flush();
  }

  /** The fallback without a cookie: no event for `quietMs`. */
  private quiet(quietMs: number, deadline: number): Promise<void> {
    const start = performance.now();
    return new Promise<void>((resolve) => {
      const check = () => {
        const now = performance.now();
        if (this.closed || now >= deadline) return resolve();
        const quietFor = now - Math.max(this.lastActivity, start);
        if (quietFor >= quietMs) return resolve();
        setTimeout(check, Math.max(1, Math.min(quietMs - quietFor, deadline - now)));
      };
      check();
    });
  }

  // ── polling and trouble ─────────────────────────────────────────────────────────────────────

  /** From now on this directory is listed and its files stat'ed every interval. */
  private pollDirectory(node: DirNode): void {
    if (node.polled) return;
    node.polled = true;
    for (const name of [...node.files.keys()]) {
      const st = probe(childPath(node, name));
      if (st?.isFile()) node.files.set(name, signature(st));
    }
    this.poller.add(node);
  }

  /**
   * Lists one directory and compares every entry with what is known. A known subdirectory that is
   * polled itself is left to its own poll, which lists it by path (so a new directory put in its
   * place, even on the same inode, is found there too): checking it here would walk its whole
   * subtree again, once per ancestor, every round. One that is watched is still walked again: a
   * polled directory's listing cannot tell it from a new one on the same inode, whose old watch
   * is dead.
   */
  private pollDir(node: DirNode, done: () => void): void {
    if (!this.live(node)) return done();
    readdir(node.abs, { withFileTypes: true, encoding: "buffer" }, (error, entries) => {
      if (!this.live(node)) return done();
      if (error) {
        // A directory that vanished is its parent's news.
        if (!isGone(error)) this.trouble.unreadable(node, error);
        return done();
      }
      const seen = new Set<string>();
      for (const entry of entries) {
        const checked = utf8Name(entry.name);
        if (!checked.valid) {
          if (entry.isFile() || entry.isDirectory()) this.cannotSync(node, checked.escaped, entry.isDirectory());
        } else {
          seen.add(checked.name);
          if (entry.isDirectory() && node.dirs.get(checked.name)?.polled) continue;
          if (this.live(node)) this.checkEntry(node, checked.name);
        }
      }
      for (const name of [...node.files.keys(), ...node.dirs.keys()]) if (!seen.has(name) && this.live(node)) this.checkEntry(node, name);
      done();
    });
  }

  /** A watch that stopped with an error may have lost events: poll the directory, rescan the tree. */
  private watchError(node: DirNode, error: unknown): void {
    this.watchFailed(node, error);
    this.rescanAll(`a watch failed (${describeError(error)})`);
  }

  private watchFailed(node: DirNode, error: unknown): void {
    node.watcher?.close();
    node.watcher = undefined;
    if (this.live(node) && this.trouble.watchFailed(node, error)) this.pollDirectory(node);
  }
}

function withDeadline(work: Promise<void>, deadline: number): Promise<void> {
  const left = deadline - performance.now();
  if (left <= 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, left);
    void work.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
