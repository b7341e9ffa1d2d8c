import type { FileChange } from "../agents/types.js";
import type { FsWatcher } from "../fswatch/index.js";
import type { PathPolicy } from "../paths/paths.js";
import type { Reporter } from "../report/reporter.js";
import type { ScanLoop } from "../sync/scan-loop.js";
import type { SyncOptions, SyncResult, SyncSession } from "../sync/index.js";

export interface TreeSyncOptions {
  policy: PathPolicy;
  report: Reporter;
  /** Where the file watcher's changes go (the same intake as the stream's). */
  onChange: (change: FileChange) => void;
  /** The file watcher's settings, unless it is off (--no-fs-watch). */
  fsWatch: { poll?: number } | undefined;
  /** The sync session's settings; none in a dry run. */
  sync: SyncOptions | undefined;
  /** Between two rescans of the tree (0: none). */
  rescanMs: number;
  twoWay: boolean;
}

/** What the end of the tree's sync found. */
export interface TreeSyncEnd {
  result: SyncResult | undefined;
  /** In-root files the API cannot name (the last scan's findings). */
  unrepresentable: { remote: string; reason: string }[];
  /** The flush timeout cut the last scan short. */
  scanCutShort: boolean;
}

/** How the session's sync ends: at the deadline (end) or now (abort). */
export interface TreeSyncStop {
  stop: (session: SyncSession, remainingMs: number) => Promise<SyncResult>;
  /** The end's; none when aborting. */
  deadline: Deadline | undefined;
}

export interface Deadline {
  /** Aborted when the time is up. */
  signal: AbortSignal;
  remainingMs(): number;
  /** `work`, or nothing once the time is up (work left running is cut short by `signal`). */
  race(work: Promise<unknown>): Promise<unknown>;
}

export function deadlineIn(ms: number): Deadline {
  const at = Date.now() + ms;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`--timeout (${ms} ms) passed`)), ms);
  timer.unref();
  const timeUp = new Promise<void>((resolve) => controller.signal.addEventListener("abort", () => resolve(), { once: true }));
  return {
    signal: controller.signal,
    remainingMs: () => Math.max(0, at - Date.now()),
    race: (work) => Promise.race([work, timeUp]),
  };
}

/**
 * The tree's side of a watch: the sync session, the scans that compare the tree with the base
 * (events are hints, the tree is the truth) and the file watcher. All loaded after the first
 * turn: they cost start-up time the first output byte must not wait for.
 */
export class TreeSync {
  private readonly session: Promise<SyncSession> | undefined;
  private readonly scans: Promise<ScanLoop> | undefined;
  private readonly fsWatcher: Promise<FsWatcher> | undefined;

  constructor(options: TreeSyncOptions) {
    const { report, sync, fsWatch, policy } = options;
    this.session =
      sync &&
      afterThisTurn(() => import("../sync/index.js")).then(async ({ createSyncSession, remindOfPending }) => {
        await remindOfPending(sync.root, sync.apiUrl, sync.projectId, report);
        return createSyncSession(sync);
      });
    this.scans = this.session?.then(async (session) => {
      const { ScanLoop } = await import("../sync/scan-loop.js");
      const loop = new ScanLoop({ session, report, twoWay: options.twoWay, everyMs: options.rescanMs });
      void loop.run("start");
      return loop;
    });
    this.fsWatcher =
      fsWatch &&
      afterThisTurn(() => import("../fswatch/index.js")).then(({ startFsWatcher }) =>
        startFsWatcher({ root: policy.root, ignoreEngine: policy.ignore, poll: fsWatch.poll, report, onChange: options.onChange }),
      );
    void this.fsWatcher?.then(async (watcher) => {
      await watcher.ready;
      await (await this.scans)?.run("ready");
    });
  }

  /** The sync session's refusal of a rewound server (src/reconcile/lineage.ts); undefined in a dry run. */
  async historyRefusal(): Promise<string | undefined> {
    return (await this.session)?.historyRefusal();
  }

  /** A path to sync (there is a session: not a dry run). */
  add(remote: string, cause: string): void {
    void this.session!.then((session) => session.add({ remote, cause }));
  }

  /**
   * Stops the file watcher, runs the last scan and stops the session. A `deadline` (end, not
   * abort): the settle and the last scans must leave the flush its time within the flush timeout;
   * a deep or huge tree cuts them short (the next start's scan catches up).
   */
  async end({ stop, deadline }: TreeSyncStop): Promise<TreeSyncEnd> {
    const watcher = await this.fsWatcher;
    // A change made just before the agent exited may still be on its way from the kernel: the
    // watcher's settle barrier (a cookie under .uspark/) says when every earlier event was read.
    const eventsComplete = watcher && deadline ? (await deadline.race(watcher.settle())) === true : false;
    await watcher?.close();
    const loop = await this.scans;
    // Whatever the events missed is synced and counted before the exit code is decided.
    if (loop && deadline) await loop.end(deadline.signal, eventsComplete);
    else loop?.stop();
    const result = this.session ? await stop(await this.session, deadline?.remainingMs() ?? 0) : undefined;
    const unrepresentable = (loop?.unrepresentable ?? []).map(({ remote, reason }) => ({ remote, reason }));
    return { result, unrepresentable, scanCutShort: loop?.cutShortByDeadline === true };
  }

  /** Cuts an end under way short: the session journals what is left and settles. */
  abort(): void {
    void this.session?.then((session) => session.abort());
  }
}

/**
 * Loads a module once this turn of the event loop is over: stdin bytes that are waiting already
 * go out first, instead of after the module is read and compiled.
 */
function afterThisTurn<T>(load: () => Promise<T>): Promise<T> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(load);
}
