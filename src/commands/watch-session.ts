import { checkPrefix, UsageError, type Connection } from "../config/config.js";
import { ownLogIgnores } from "../ignore/own-log.js";
import type { ReporterOptions } from "../report/reporter.js";
import { StateDirError } from "../state/state-dir.js";
import { RootLockHeld, takeRootLock, type RootLock } from "../state/state-lock.js";
import { createWatcher, DEFAULTS, type Watcher, type WatcherOptions } from "../watcher/watcher.js";
import { connect, reporterFor, rootOf } from "./kit/connection.js";
import { countFlag, Flag, negatedFlag, positiveFlag, switchFlag, type FlagValues } from "./kit/flag-kit.js";
import { logFlags, projectCreateFlags, requestTimeoutFlag, timeoutFlagWithOlderName, treeFlags, type LogFlags } from "./kit/flags.js";

// The sync session of watch, watch-claude and run: their shared flags, the root's lock, then the watcher.

/** The flags of a sync session, after each command's own (watch, watch-claude, run). */
export const sessionFlags = {
  ...projectCreateFlags,
  dryRun: switchFlag("--dry-run", "detect and print what would be pushed; send nothing"),
  debounce: countFlag("--debounce <ms>", "push after this long without a new change", DEFAULTS.debounceMs),
  maxWait: countFlag("--max-wait <ms>", "push at the latest this long after a batch's first change", DEFAULTS.maxWaitMs),
  timeout: timeoutFlagWithOlderName("at the end, wait this long for the last pushes (and give up on a server silent for this long)"),
  requestTimeout: requestTimeoutFlag,
  maxFileSize: countFlag("--max-file-size <bytes>", "skip (and report) larger files", DEFAULTS.maxFileSize),
  concurrency: positiveFlag("--concurrency <n>", "parallel blob uploads", DEFAULTS.concurrency),
  fsWatch: negatedFlag("--no-fs-watch", "do not watch the file system for changes made outside tool events"),
  // A number, or true when given without one (then a second).
  poll: new Flag<number | true | undefined>(() =>
    countFlag("--poll [ms]", "poll the file system (bind mounts in containers where native events never come)").make(),
  ),
  rescan: countFlag(
    "--rescan <ms>",
    "compare the whole tree with what was synced this often (0: only at start and end)",
    DEFAULTS.rescanMs,
  ),
  maxLineLength: positiveFlag("--max-line-length <bytes>", "pass longer lines through without parsing them"),
  // Off by default: transcripts hold prompts and file contents.
  transcript: switchFlag(
    "--transcript",
    "also send the agent's stream, byte for byte, as this session's transcript (it holds prompts and file contents)",
  ),
  ...treeFlags,
  ...logFlags,
};

/** What a session reads of its command's flags: the shared ones, the agent's format, and watch's own. */
export type SessionFlags = FlagValues<typeof sessionFlags> & { agent: string; twoWay?: boolean; stdin?: boolean };

export interface Started {
  watcher: Watcher;
  root: string;
  /** Undefined in a dry run. */
  connection: Connection | undefined;
  /** The root's watcher lock; none in a dry run, which sends nothing. */
  lock: RootLock | undefined;
}

/**
 * The root's lock (unless given, or a dry run), then the watcher; throws a UsageError for bad flags
 * or a held lock. `mayShare` (the pipe form): beside a live uspark holding the lock, see lockRoot.
 */
export async function startWatcher(flags: SessionFlags, extra: WatcherExtras, heldLock?: SessionLock, mayShare = false): Promise<Started> {
  const root = rootOf(flags);
  const { connection, prefix } = flags.dryRun
    ? { connection: undefined, prefix: flags.prefix }
    : await connect(flags, root, { dryRunNeedsNone: true });
  checkPrefix(root, prefix);
  const lock = heldLock ?? (flags.dryRun ? undefined : await lockRoot(root, flags, mayShare));
  // Beside: the other uspark's file watcher sees the tree and its two-way watch writes it.
  const beside = lock === "beside";
  const own = beside ? { ...flags, prefix, fsWatch: false, twoWay: false } : { ...flags, prefix };
  try {
    return {
      watcher: watcherFor(own, root, connection, { ...extra, watchedBeside: beside }),
      root,
      connection,
      lock: beside ? undefined : lock,
    };
  } catch (error) {
    if (!heldLock) await release(lock);
    throw error;
  }
}

/** The root's lock, or "beside": a session that runs beside the live uspark holding it. */
export type SessionLock = RootLock | "beside";

/**
 * The root's lock. With `mayShare` (the pipe form, run), a live uspark holding it (the daemon of
 * the dev-container recipe) is no error: the session runs beside it, with no lock and no file
 * watcher of its own, syncing what its agent's events name through conditional commits and the
 * transactional state file, as two pushes at once do (docs/sync.md, Many writers); said in one line.
 */
export async function lockRoot(root: string, flags: LogFlags, mayShare: boolean): Promise<SessionLock> {
  const report = reporterFor(flags);
  try {
    return await takeRootLock(root, (why) => report.info("lock", why));
  } catch (error) {
    if (!mayShare || !(error instanceof RootLockHeld)) return lockFailure(error);
    const line = `beside the uspark (pid ${error.pid}) that watches ${root}: this session syncs what its agent's events name, with no file watcher of its own (that uspark's sees the rest)`;
    report.info("beside", line, { pid: error.pid, root });
    return "beside";
  }
}

export async function release(lock: SessionLock | undefined): Promise<void> {
  if (lock !== "beside") await lock?.release();
}

/** What a command adds to a watcher's options: a warning's switch, the daemon's stop, the run view's listener. */
type WatcherExtras = Pick<WatcherOptions, "warnNoJson" | "onSyncStopped" | "commitAgent" | "watchedBeside"> & {
  listener?: ReporterOptions["listener"];
};

/** A live watcher of the same root is a configuration error (exit 2); anything else goes on up. */
function lockFailure(error: unknown): never {
  if (error instanceof RootLockHeld)
    throw new UsageError(error.message, `stop it first, or watch another --root (a lock whose process is gone is taken over)`);
  if (error instanceof StateDirError) throw new UsageError(error.message);
  throw error;
}

/** A watcher from the command line's flags; throws a UsageError for bad ones. */
function watcherFor(flags: SessionFlags, root: string, connection: Connection | undefined, { listener, ...extra }: WatcherExtras): Watcher {
  const report = reporterFor(flags, connection?.token, listener, flags.stdin === false);
  // Its own log inside the tree would be committed after each line it writes, in a loop.
  const ownLogs = ownLogIgnores(root, (rel, stream) =>
    report.info("ignore", `not syncing ${rel}: it is this process's own log (its ${stream})`, { path: rel }),
  );
  return createWatcher({
    root,
    agent: flags.agent,
    ignore: ownLogs.length > 0 ? [...(flags.ignore ?? []), ...ownLogs] : flags.ignore,
    prefix: flags.prefix,
    dryRun: flags.dryRun,
    fsWatch: flags.fsWatch,
    poll: flags.poll === true ? 1000 : flags.poll,
    maxLineLength: flags.maxLineLength,
    report,
    ...connection,
    insecure: flags.insecure,
    debounceMs: flags.debounce,
    maxWaitMs: flags.maxWait,
    timeoutMs: flags.timeout,
    requestTimeoutMs: flags.requestTimeout,
    maxFileSize: flags.maxFileSize,
    concurrency: flags.concurrency,
    rescanMs: flags.rescan,
    transcript: flags.transcript,
    twoWay: flags.twoWay === true,
    create: flags.create === true,
    ...extra,
  });
}
