import { lstatSync, readFileSync, readdir, readFile, realpathSync, watch, type Dirent, type FSWatcher, type Stats } from "node:fs";
import path from "node:path";
import type { FileChange } from "./agents/types.js";
import type { Reporter } from "./report.js";
import { IgnoreRules, extendChain, outerRules, parseIgnoreFile, type RuleChain, type RuleSet } from "./fswatch/rules.js";

/**
 * The file system backstop: catches the changes no tool event announces (`sed -i`, `rm`, `mv`,
 * `git checkout`, formatters) and reports them as `FileChange { cause: "fs", confirmed: true }`.
 *
 * One `fs.watch` (one inotify watch) per directory that is not ignored, over a tree walked once
 * in the background; ignored directories (`node_modules/`, `.git/`, `.uspark/`, `.gitignore`d
 * ones, `--ignore`) are never entered. A directory that appears is watched first and listed
 * second, so that files written into it a moment after it was created are reported too. With
 * `poll` (or CHOKIDAR_USEPOLLING) every directory is listed and every file stat'ed on an interval
 * instead; a directory the OS refuses to watch (inotify limit) is polled the same way.
 *
 * Why not chokidar or @parcel/watcher: see bench/fswatch.mjs. chokidar 5 stats every file and took
 * seconds and hundreds of MiB on a 50,000-file tree; @parcel/watcher's inotify backend never lists
 * a directory it sees created, so after `mkdir -p a/b && echo > a/b/f` it misses `a/b` and every
 * later write below it.
 */

export interface FsWatcherOptions {
  /** The project root, a real path. Nothing outside it is ever reported. */
  root: string;
  /** The user's gitignore-style globs (`--ignore`), relative to the root. */
  ignore?: readonly string[];
  /** Poll every this many ms instead of using native events (also when CHOKIDAR_USEPOLLING is set). */
  poll?: number;
  report: Reporter;
  onChange: (change: FileChange) => void;
  /** @internal Replaces `fs.watch` in tests, to play an OS that refuses a watch. */
  watchDirectory?: WatchDirectory;
}

export type WatchDirectory = (dir: string, listener: (event: string, filename: string | null) => void) => FSWatcher;

export interface SettleOptions {
  /** Resolve once no event came for this long (default 150 ms). */
  quietMs?: number;
  /** Resolve after this long whatever happens (default 1500 ms). */
  maxMs?: number;
}

export interface FsWatcher {
  /** Resolves when the initial walk is done (never rejects: problems are warnings). */
  readonly ready: Promise<void>;
  /** "events": native events (inotify); "poll": listing and stat'ing on an interval. */
  readonly mode: "events" | "poll";
  /**
   * Resolves once the changes made so far have been reported: events the OS has queued are read,
   * new directories are listed, a poll round runs at once; then no event for `quietMs`, or `maxMs`.
   */
  settle(options?: SettleOptions): Promise<void>;
  /** Stops watching; no change is reported after it resolves. */
  close(): Promise<void>;
  /** What is being watched right now. */
  stats(): FsWatcherStats;
}

export interface FsWatcherStats {
  dirs: number;
  files: number;
  /** Directories polled: all in poll mode, else the ones the OS refused to watch. */
  polledDirs: number;
}

export const SETTLE_QUIET_MS = 150;
export const SETTLE_MAX_MS = 1500;
export const DEFAULT_POLL_MS = 1000;
/** Events for one path within this window are looked at once, in their final state. */
const COALESCE_MS = 20;
/** Directory listings in flight at once (libuv has 4 threads by default). */
const LIST_CONCURRENCY = 8;

/** Starts watching at once; the walk of the tree runs in the background (see `ready`). */
export function startFsWatcher(options: FsWatcherOptions): FsWatcher {
  return new TreeWatcher(options);
}

/** Is an environment flag such as CHOKIDAR_USEPOLLING set to something true? */
export function envFlag(value: string | undefined): boolean {
  if (value === undefined) return false;
  const normalized = value.trim().toLowerCase();
  return normalized !== "" && normalized !== "0" && normalized !== "false" && normalized !== "no" && normalized !== "off";
}

interface DirNode {
  readonly name: string;
  readonly parent: DirNode | undefined;
  /** Relative to the root, `/`-separated; "" for the root. */
  readonly rel: string;
  readonly abs: string;
  /** Tells the same directory from one put in its place; 0 until known. */
  ino: number;
  /** The rules for this directory's entries. */
  chain: RuleChain;
  /** Its own .gitignore, as read. */
  rulesText: string | undefined;
  ownRules: RuleSet | undefined;
  rulesLoaded: boolean;
  /** Regular files by name → what lstat said of them when polled, else null. */
  readonly files: Map<string, FileSig | null>;
  readonly dirs: Map<string, DirNode>;
  watcher: FSWatcher | undefined;
  polled: boolean;
  removed: boolean;
}

/** "initial": the first walk, nothing is a change; "new": a directory that appeared, its files are
 * changes; "rescan": after a .gitignore changed, pick up what is no longer ignored, quietly. */
type ScanMode = "initial" | "new" | "rescan";

/** What tells a polled file changed. */
interface FileSig {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
}

class TreeWatcher implements FsWatcher {
  readonly ready: Promise<void>;
  readonly mode: "events" | "poll";
  private readonly report: Reporter;
  private readonly onChange: (change: FileChange) => void;
  private readonly rules: IgnoreRules;
  private readonly watchDirectory: WatchDirectory;
  private readonly interval: number;
  /** As given; resolved in start(), so that the constructor does no file system work. */
  private readonly rootOption: string;
  private root: DirNode | undefined;
  private outer: RuleChain = [];
  private closed = false;
  /** The first walk is done: before, a poll round would take half-listed directories for new ones. */
  private walked = false;
  /** Paths with events not looked at yet, per directory. */
  private dirty = new Map<DirNode, Set<string>>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly polled = new Set<DirNode>();
  private pollTimer: NodeJS.Timeout | undefined;
  private pollRound: Promise<void> | undefined;
  /** Walks and poll rounds in flight. */
  private pending = 0;
  private lastActivity = 0;
  private readonly warned = new Set<string>();

  constructor(options: FsWatcherOptions) {
    this.rootOption = options.root;
    this.report = options.report;
    this.onChange = options.onChange;
    this.rules = new IgnoreRules(options.ignore);
    this.watchDirectory = options.watchDirectory ?? ((dir, listener) => watch(dir, { persistent: false }, listener));
    const envPolling = envFlag(process.env.CHOKIDAR_USEPOLLING);
    const envInterval = Number(process.env.CHOKIDAR_INTERVAL);
    this.mode = (options.poll !== undefined && options.poll > 0) || envPolling ? "poll" : "events";
    this.interval =
      options.poll !== undefined && options.poll > 0 ? options.poll : Number.isFinite(envInterval) && envInterval > 0 ? envInterval : DEFAULT_POLL_MS;
    // Not even the few synchronous reads of the start run before the caller's next I/O.
    // Never rejects: nobody has to await it, and an unhandled rejection would end the process.
    this.ready = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.start())
      .catch((error: unknown) => this.report.warn("fswatch", `the file system watcher stopped: ${describe(error)}`));
  }

  private async start(): Promise<void> {
    if (this.closed) return;
    const started = performance.now();
    let rootPath = path.resolve(this.rootOption);
    try {
      rootPath = realpathSync.native(rootPath);
      const st = lstatSync(rootPath);
      if (!st.isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    } catch (error) {
      this.report.warn("fswatch", `cannot watch ${rootPath}: ${describe(error)}; only the agent's own events are seen`, { path: rootPath });
      return;
    }
    this.outer = outerRules(rootPath);
    this.root = this.makeNode(undefined, "", rootPath);
    this.root.chain = this.outer;
    this.pending++;
    try {
      await this.walk(this.root, "initial");
    } finally {
      this.pending--;
    }
    if (this.closed) return;
    this.walked = true;
    const stats = this.stats();
    const how = this.mode === "poll" ? `polling every ${this.interval} ms` : stats.polledDirs > 0 ? `${stats.polledDirs} of them polled` : "native events";
    this.report.debug("fswatch", `watching ${stats.dirs} directories, ${stats.files} files (${how}), ready in ${Math.round(performance.now() - started)} ms`, {
      ...stats,
      mode: this.mode,
    });
    this.schedulePoll();
  }

  async settle(options: SettleOptions = {}): Promise<void> {
    if (this.closed) return;
    const quietMs = options.quietMs ?? SETTLE_QUIET_MS;
    const maxMs = options.maxMs ?? SETTLE_MAX_MS;
    const start = performance.now();
    const deadline = start + maxMs;
    await withDeadline(this.ready, deadline);
    // A poll round that began before the last change may have passed it by: run a fresh one.
    if (this.walked && this.polled.size > 0) await withDeadline(this.pollNow(), deadline);
    await new Promise<void>((resolve) => {
      const check = () => {
        const now = performance.now();
        if (this.closed || now >= deadline) return resolve();
        const idle = this.pending === 0 && this.dirty.size === 0;
        const quietFor = now - Math.max(this.lastActivity, start);
        if (idle && quietFor >= quietMs) return resolve();
        const wait = idle ? quietMs - quietFor : COALESCE_MS;
        setTimeout(check, Math.max(1, Math.min(wait, deadline - now)));
      };
      check();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.flushTimer);
    clearTimeout(this.pollTimer);
    this.dirty.clear();
    this.polled.clear();
    if (this.root) this.forEachNode(this.root, (node) => this.unwatch(node));
  }

  stats(): FsWatcherStats {
    const stats: FsWatcherStats = { dirs: 0, files: 0, polledDirs: 0 };
    if (this.root && !this.closed)
      this.forEachNode(this.root, (node) => {
        stats.dirs++;
        stats.files += node.files.size;
        if (node.polled) stats.polledDirs++;
      });
    return stats;
  }

  // ── the tree ────────────────────────────────────────────────────────────────────────────────

  private makeNode(parent: DirNode | undefined, name: string, abs: string): DirNode {
    return {
      name,
      parent,
      rel: parent === undefined ? "" : parent.rel === "" ? name : `${parent.rel}/${name}`,
      abs,
      ino: 0,
      chain: parent?.chain ?? this.outer,
      rulesText: undefined,
      ownRules: undefined,
      rulesLoaded: false,
      files: new Map(),
      dirs: new Map(),
      watcher: undefined,
      polled: false,
      removed: false,
    };
  }

  private addDir(parent: DirNode, name: string): DirNode {
    const node = this.makeNode(parent, name, path.join(parent.abs, name));
    parent.dirs.set(name, node);
    return node;
  }

  private live(node: DirNode): boolean {
    return !this.closed && !node.removed;
  }

  private forEachNode(node: DirNode, visit: (node: DirNode) => void): void {
    const stack = [node];
    while (stack.length > 0) {
      const next = stack.pop()!;
      visit(next);
      for (const child of next.dirs.values()) stack.push(child);
    }
  }

  /** Forgets a directory and everything below it, reporting its known files as deleted if `announce`. */
  private removeDir(node: DirNode, announce: boolean): void {
    if (node.parent?.dirs.get(node.name) === node) node.parent.dirs.delete(node.name);
    this.forEachNode(node, (each) => {
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
    this.polled.delete(node);
  }

  // ── walking ─────────────────────────────────────────────────────────────────────────────────

  /** Lists `top` and every directory below it that is not ignored, watching each before listing it. */
  private walk(top: DirNode, mode: ScanMode): Promise<void> {
    return new Promise<void>((resolve) => {
      const queue: DirNode[] = [top];
      let active = 0;
      let pumping = false;
      const pump = () => {
        // A listing that ends at once calls back into pump: let the running loop go on instead.
        if (pumping) return;
        pumping = true;
        while (active < LIST_CONCURRENCY && queue.length > 0) {
          const node = queue.pop()!;
          active++;
          this.scanDir(node, mode, (children) => {
            active--;
            for (const child of children) queue.push(child);
            pump();
          });
        }
        pumping = false;
        if (active === 0 && queue.length === 0) resolve();
      };
      pump();
    });
  }

  private scanDir(node: DirNode, mode: ScanMode, done: (children: DirNode[]) => void): void {
    if (!this.live(node)) return done([]);
    if (!node.watcher && !node.polled) {
      const st = probe(node.abs);
      // Gone or replaced by a file already: the parent's events say so.
      if (!st || !st.isDirectory()) return done([]);
      node.ino = st.ino;
      // Watch first, list second: nothing created in between is missed.
      this.watchDir(node);
    }
    readdir(node.abs, { withFileTypes: true }, (error, entries) => {
      if (!this.live(node)) return done([]);
      if (error) {
        this.unreadable(node, error);
        return done([]);
      }
      const hasRules = !node.rulesLoaded && entries.some((entry) => entry.name === ".gitignore" && entry.isFile());
      if (!hasRules) {
        node.rulesLoaded = true;
        return done(this.takeEntries(node, entries, mode));
      }
      readFile(path.join(node.abs, ".gitignore"), "utf8", (_error, text) => {
        if (!this.live(node)) return done([]);
        this.setOwnRules(node, text);
        done(this.takeEntries(node, entries, mode));
      });
    });
  }

  /** Records the entries of a listing; returns the directories to list next. */
  private takeEntries(node: DirNode, entries: Dirent[], mode: ScanMode): DirNode[] {
    const children: DirNode[] = [];
    const announce = mode === "new";
    for (const entry of entries) {
      const name = entry.name;
      if (entry.isFile()) {
        if (node.files.has(name) || this.rules.ignored(node.chain, node.rel, name, false)) continue;
        if (announce || node.polled) {
          // The listing may be older than an event already handled: believe lstat, not it.
          const st = probe(childPath(node, name));
          if (!st?.isFile()) continue;
          node.files.set(name, node.polled ? signature(st) : null);
        } else {
          node.files.set(name, null);
        }
        if (announce) this.emit(node, name, "write");
      } else if (entry.isDirectory()) {
        const known = node.dirs.get(name);
        if (known) {
          if (mode === "rescan") children.push(known);
        } else if (!this.rules.ignored(node.chain, node.rel, name, true)) {
          children.push(this.addDir(node, name));
        }
      }
      // Symlinks are never followed and never reported; sockets, fifos and devices neither.
    }
    return children;
  }

  private track(work: Promise<void>): void {
    this.pending++;
    void work.finally(() => {
      this.pending--;
    });
  }

  // ── .gitignore ──────────────────────────────────────────────────────────────────────────────

  private setOwnRules(node: DirNode, text: string | undefined): void {
    node.rulesLoaded = true;
    node.rulesText = text;
    node.ownRules = parseIgnoreFile(text);
    node.chain = extendChain(node.parent?.chain ?? this.outer, node.rel, node.ownRules);
  }

  /** A .gitignore changed: later events follow the new rules; the tree is trimmed or grown quietly. */
  private reloadRules(node: DirNode): void {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(node.abs, ".gitignore"), "utf8");
    } catch {
      text = undefined;
    }
    if (node.rulesLoaded && text === node.rulesText) return;
    this.setOwnRules(node, text);
    const trim = (dir: DirNode) => {
      for (const name of [...dir.files.keys()]) if (this.rules.ignored(dir.chain, dir.rel, name, false)) dir.files.delete(name);
      for (const child of [...dir.dirs.values()]) {
        if (this.rules.ignored(dir.chain, dir.rel, child.name, true)) {
          this.removeDir(child, false);
        } else {
          child.chain = extendChain(dir.chain, child.rel, child.ownRules);
          trim(child);
        }
      }
    };
    trim(node);
    this.report.debug("fswatch", `${node.rel === "" ? "" : `${node.rel}/`}.gitignore changed: applying its rules from now on`);
    this.track(this.walk(node, "rescan"));
  }

  // ── native events ───────────────────────────────────────────────────────────────────────────

  private watchDir(node: DirNode): void {
    if (this.mode === "poll") return this.pollDirectory(node);
    try {
      const watcher = this.watchDirectory(node.abs, (_event, name) => this.onEvent(node, name));
      watcher.on("error", (error) => this.watchFailed(node, error));
      node.watcher = watcher;
    } catch (error) {
      this.watchFailed(node, error);
    }
  }

  private onEvent(node: DirNode, name: string | null): void {
    if (!this.live(node)) return;
    this.lastActivity = performance.now();
    if (name === null) {
      // Linux always names the entry; elsewhere, compare the whole directory.
      this.track(new Promise<void>((resolve) => this.pollDir(node, resolve)));
      return;
    }
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
  }

  /** Compares one entry with what is known of it, and reports the difference. */
  private checkEntry(node: DirNode, name: string): void {
    const st = probe(childPath(node, name));
    // Cannot tell (EACCES, EIO…): a file that cannot be stat'ed is not a deleted file.
    if (st === undefined) return;
    const knownDir = node.dirs.get(name);
    if (st?.isDirectory()) {
      if (node.files.has(name)) this.forgetFile(node, name);
      if (knownDir) {
        if (knownDir.ino === 0 || knownDir.ino === st.ino) return; // the same directory: its watcher tells its news
        this.removeDir(knownDir, true); // another directory took its place
      }
      if (this.rules.ignored(node.chain, node.rel, name, true)) return;
      this.track(this.walk(this.addDir(node, name), "new"));
      return;
    }
    if (knownDir) this.removeDir(knownDir, true);
    if (st?.isFile()) {
      if (this.rules.ignored(node.chain, node.rel, name, false)) return;
      if (node.polled) {
        const before = node.files.get(name);
        if (before && sameFile(before, st)) return;
      }
      node.files.set(name, node.polled ? signature(st) : null);
      this.emit(node, name, "write");
      if (name === ".gitignore") this.reloadRules(node);
      return;
    }
    // Missing, or now a symlink, socket…: what was a file here is gone.
    if (node.files.has(name)) {
      this.forgetFile(node, name);
      if (name === ".gitignore") this.reloadRules(node);
    }
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
      this.warnOnce("callback", "fswatch", `a file change handler failed: ${describe(error)}`);
    }
  }

  // ── polling ─────────────────────────────────────────────────────────────────────────────────

  /** From now on this directory is listed and its files stat'ed every interval. */
  private pollDirectory(node: DirNode): void {
    if (node.polled) return;
    node.polled = true;
    this.polled.add(node);
    for (const name of [...node.files.keys()]) {
      const st = probe(childPath(node, name));
      if (st?.isFile()) node.files.set(name, signature(st));
    }
    this.schedulePoll();
  }

  private schedulePoll(): void {
    if (this.closed || !this.walked || this.polled.size === 0 || this.pollTimer || this.pollRound) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = undefined;
      void this.runPollRound();
    }, this.interval);
    // Polling alone never keeps the process alive.
    this.pollTimer.unref();
  }

  private runPollRound(): Promise<void> {
    if (this.pollRound) return this.pollRound;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    const round = this.pollAll().finally(() => {
      this.pollRound = undefined;
      this.schedulePoll();
    });
    this.pollRound = round;
    this.track(round);
    return round;
  }

  /** A fresh round: one that is running may have passed the change by already. */
  private async pollNow(): Promise<void> {
    if (this.pollRound) await this.pollRound;
    await this.runPollRound();
  }

  private pollAll(): Promise<void> {
    const nodes = [...this.polled];
    return new Promise<void>((resolve) => {
      let next = 0;
      let active = 0;
      let pumping = false;
      const pump = () => {
        if (pumping) return;
        pumping = true;
        while (active < LIST_CONCURRENCY && next < nodes.length) {
          const node = nodes[next++]!;
          active++;
          this.pollDir(node, () => {
            active--;
            pump();
          });
        }
        pumping = false;
        if (active === 0 && next >= nodes.length) resolve();
      };
      pump();
    });
  }

  /** Lists one directory and compares every entry with what is known. */
  private pollDir(node: DirNode, done: () => void): void {
    if (!this.live(node)) return done();
    // Names only: an entry's type costs more to list than to lstat, and every entry is lstat'ed.
    readdir(node.abs, (error, names) => {
      if (!this.live(node)) return done();
      if (error) {
        // A directory that vanished is its parent's news.
        if (!isGone(error)) this.unreadable(node, error);
        return done();
      }
      const seen = new Set<string>(names);
      for (const name of names) if (this.live(node)) this.checkEntry(node, name);
      for (const name of [...node.files.keys(), ...node.dirs.keys()]) if (!seen.has(name) && this.live(node)) this.checkEntry(node, name);
      done();
    });
  }

  // ── trouble ─────────────────────────────────────────────────────────────────────────────────

  private watchFailed(node: DirNode, error: unknown): void {
    node.watcher?.close();
    node.watcher = undefined;
    if (!this.live(node)) return;
    const code = errorCode(error);
    if (isGone(error)) return; // removed meanwhile: the parent's events say so
    if (code === "EACCES" || code === "EPERM") return this.unreadable(node, error);
    const where = node.rel === "" ? "the project root" : `${node.rel}/`;
    if (code === "ENOSPC") {
      this.warnOnce(
        "limit",
        "fswatch-limit",
        `the inotify watch limit is reached (fs.inotify.max_user_watches = ${readProc("fs/inotify/max_user_watches")}): ${where} and the directories beyond the limit are polled every ${this.interval} ms instead. Raise the limit (sudo sysctl fs.inotify.max_user_watches=524288) or run with --poll`,
        { path: node.rel, code },
      );
    } else if (code === "EMFILE") {
      this.warnOnce(
        "limit",
        "fswatch-limit",
        `too many inotify instances (fs.inotify.max_user_instances = ${readProc("fs/inotify/max_user_instances")}): ${where} and the directories after it are polled every ${this.interval} ms instead. Raise the limit (sudo sysctl fs.inotify.max_user_instances=1024) or run with --poll`,
        { path: node.rel, code },
      );
    } else {
      this.warnOnce("watch", "fswatch-limit", `cannot watch ${where} (${describe(error)}): it is polled every ${this.interval} ms instead; --poll polls everything`, {
        path: node.rel,
        code,
      });
    }
    this.pollDirectory(node);
  }

  private unreadable(node: DirNode, error: unknown): void {
    if (isGone(error)) return;
    const where = node.rel === "" ? "the project root" : `${node.rel}/`;
    this.warnOnce(
      "unreadable",
      "fswatch-unreadable",
      `cannot read ${where} (${describe(error)}): changes under it are not seen. Fix its permissions, or leave it out with --ignore`,
      { path: node.rel, code: errorCode(error) },
    );
  }

  /** The first problem of a kind is a warning; the same kind again is a debug line. */
  private warnOnce(kind: string, event: string, message: string, fields?: Record<string, unknown>): void {
    if (this.warned.has(kind)) return this.report.debug(event, message, fields);
    this.warned.add(kind);
    this.report.warn(event, message, fields);
  }
}

/** The stats of an entry; null when it does not exist; undefined when that cannot be told. */
function probe(abs: string): Stats | null | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return isGone(error) ? null : undefined;
  }
}

function signature(st: Stats): FileSig {
  return { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino };
}

function sameFile(sig: FileSig, st: Stats): boolean {
  return sig.mtimeMs === st.mtimeMs && sig.ctimeMs === st.ctimeMs && sig.size === st.size && sig.ino === st.ino;
}

/** `node.abs` is normalised and a name has no separator: no need for path.join. */
function childPath(node: DirNode, name: string): string {
  return node.abs.endsWith(path.sep) ? node.abs + name : node.abs + path.sep + name;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

function isGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

function describe(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
}

function readProc(name: string): string {
  try {
    return readFileSync(`/proc/sys/${name}`, "utf8").trim();
  } catch {
    return "unknown";
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
