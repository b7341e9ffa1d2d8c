import { TreeWatcher } from "./tree-watcher.js";
import type { FsWatcher, FsWatcherOptions } from "./types.js";

/**
 * The file system backstop: catches the changes no tool event announces (`sed -i`, `rm`, `mv`,
 * `git checkout`, formatters) and reports them as `FileChange { cause: "fs", confirmed: true }`.
 *
 * One `fs.watch` (one inotify watch) per directory that is not ignored, over a tree walked once
 * in the background; ignored directories (the one ignore engine's decision: built-ins,
 * `.gitignore`d, `--ignore`) are never entered. A directory that appears is watched first and
 * listed second, so that files written into it a moment after it was created are reported too.
 * Events are hints: an event on a known directory's name re-lists it (a new directory on a reused
 * inode), a changed .gitignore re-lists what it covers (files no longer ignored are reported), and
 * a burst of events or a watch error rescans the tree (the kernel's queue may have overflowed).
 * With `poll` (or CHOKIDAR_USEPOLLING) every directory is listed and every file stat'ed on an
 * interval instead; a directory the OS refuses to watch (inotify limit) is polled the same way.
 *
 * The pieces, one job each, are in ./fswatch/: tree-watcher (events → changes), tree (the known
 * directories), poller, cookie (the settle barrier), burst (overflow suspicion), names (UTF-8),
 * trouble (warnings).
 *
 * Why not chokidar or @parcel/watcher: see bench/fswatch.mjs. chokidar 5 stats every file and took
 * seconds and hundreds of MiB on a 50,000-file tree; @parcel/watcher's inotify backend never lists
 * a directory it sees created, so after `mkdir -p a/b && echo > a/b/f` it misses `a/b` and every
 * later write below it.
 */

export type { FsWatcher, FsWatcherOptions, FsWatcherStats, SettleOptions, WatchDirectory } from "./types.js";
export { DEFAULT_POLL_MS, SETTLE_MAX_MS, SETTLE_QUIET_MS } from "./tree-watcher.js";

/** Starts watching at once; the walk of the tree runs in the background (see `ready`). */
export function startFsWatcher(options: FsWatcherOptions): FsWatcher {
  return new TreeWatcher(options);
}
