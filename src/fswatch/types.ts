import type { FileChange } from "../agents/types.js";
import type { IgnoreEngine } from "../ignore/engine.js";
import type { Reporter } from "../report/reporter.js";
import type { WatchDirectory } from "./cookie.js";

export type { WatchDirectory };

export interface FsWatcherOptions {
  /** The project root, a real path. Nothing outside it is ever reported. */
  root: string;
  /** The user's gitignore-style globs (`--ignore`), relative to the root (when no `ignoreEngine` is given). */
  ignore?: readonly string[];
  /** The session's one ignore engine, shared with the path policy. */
  ignoreEngine?: IgnoreEngine;
  /** Poll every this many ms instead of using native events (also when CHOKIDAR_USEPOLLING is set). */
  poll?: number;
  report: Reporter;
  onChange: (change: FileChange) => void;
  /** @internal Replaces `fs.watch` in tests, to play an OS that refuses a watch. */
  watchDirectory?: WatchDirectory;
}

export interface SettleOptions {
  /** Without a cookie (it could not be written): resolve once no event came for this long (default 150 ms). */
  quietMs?: number;
  /** Resolve after this long whatever happens (default 5000 ms). */
  maxMs?: number;
}

export interface FsWatcher {
  /** Resolves when the initial walk is done (never rejects: problems are warnings). */
  readonly ready: Promise<void>;
  /** "events": native events (inotify); "poll": listing and stat'ing on an interval. */
  readonly mode: "events" | "poll";
  /**
   * Resolves once the changes made so far have been reported: a cookie written under `.uspark/`
   * came back (so every event before it was read), a poll round ran, new directories are listed
   * and a rescan due after a burst of events is done; or after `maxMs`. True when every change so
   * far is known to be reported: native events with nothing polled, the cookie came back, nothing
   * pending, and nothing ever went wrong (no unreadable or unwatchable directory, no failure).
   */
  settle(options?: SettleOptions): Promise<boolean>;
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
