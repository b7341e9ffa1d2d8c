import os from "node:os";
import type { CommitSource } from "../api/types.js";
import type { IgnoreEngine } from "../ignore/engine.js";
import { BaseKeeper } from "../reconcile/base-keeper.js";
import { DiskTree } from "../reconcile/disk-tree.js";
import { removeOwnTemps } from "../state/own-temps.js";
import { gitCleanFiles } from "../reconcile/git-clean.js";
import type { LocalTree } from "../reconcile/local-tree.js";
import { UsageError } from "../config/config.js";
import { withProject } from "../transfer/projects.js";
import { Ledger } from "../reconcile/ledger.js";
import { Reconciler, type RoundResult } from "../reconcile/reconciler.js";
import { versionLine } from "../reconcile/commit-step.js";
import { RemoteView } from "../reconcile/remote-view.js";
import { checkLineage, RewoundError } from "../reconcile/lineage.js";
import { fileStateStore, type StateStore } from "../reconcile/state-store.js";
import type { Reporter } from "../report/reporter.js";
import { ApiClient, ApiError } from "../transfer/client.js";
import { drainWithDeadline } from "./drain.js";
import { RemoteFollower } from "./follower.js";
import { journalPath } from "./journal.js";
import { summarize, type SyncResult } from "./outcome.js";
import { ProjectRemote, type ProjectApi } from "../transfer/project-remote.js";
import { realTimers, type Timers } from "../util/timers.js";
import { ChangeQueue } from "./queue.js";
import { AnnouncedWrites } from "./echoes.js";
import { hostOf, RetryingCaller, type BackoffPolicy } from "../transfer/retry.js";
import { createSessionJournal, type SessionJournal, type Unsynced } from "./session-journal.js";
import { errorText } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * A sync session: the change queue in front of the reconcile, the deadline at the end, and the
 * journal of whatever could not be synced. The watcher, its scans and the two-way follower feed it
 * paths; each batch is one round of the reconcile (src/reconcile/reconciler.ts).
 */

export interface SyncTarget {
  /** The path in the remote project. */
  remote: string;
  /** Tool name, "fs", "scan", "remote". Anything but a scan is evidence for a delete. */
  cause: string;
}

export interface SyncOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  /** The real path of the project root. */
  root: string;
  prefix?: string;
  /** The session's one ignore engine (shared with the path policy and the file watcher). */
  ignore: IgnoreEngine;
  /** Request timeout, ms: the idle limit for headers and body, and the least hard deadline of a whole request. */
  requestTimeoutMs: number;
  maxFileSize: number;
  concurrency: number;
  debounceMs: number;
  maxWaitMs: number;
  source: CommitSource;
  report: Reporter;
  /** "two-way": remote changes are written here too. Default "push". */
  mode?: "push" | "two-way";
  maxBatch?: number;
  backoff?: BackoffPolicy;
  timers?: Timers;
  /** Syncing stopped for good (401, 403, unknown project, a server that contradicts itself). */
  onStopped?: (reason: string) => void;
  /** Create the project if the server does not have it (else the session stops: a usage error). */
  create?: boolean;
  /** Test and simulation seams: the tree, the API, the state file, the machine's name. */
  tree?: LocalTree;
  api?: ProjectApi;
  store?: StateStore;
  host?: string;
}

export interface FinishOptions {
  /** The timeout counts from the last request that went through (push: a large tree takes as long as it takes). */
  idle?: boolean;
}

/** Why a batch was cut short: the end-of-input deadline, or an interrupt. */
export class SyncInterrupted extends UsparkError {
  readonly code = "sync_interrupted";
  override readonly name = "SyncInterrupted";
}

export interface SessionParts {
  base: BaseKeeper;
  reconciler: Reconciler;
}

export class SyncSession {
  readonly view: RemoteView;
  readonly remote: ProjectRemote;
  readonly tree: LocalTree;
  private readonly controller = new AbortController();
  private readonly client: ApiClient | undefined;
  private readonly caller: RetryingCaller;
  private readonly queue: ChangeQueue<SyncTarget>;
  private readonly announced: AnnouncedWrites;
  private readonly unsynced: Unsynced = new Map();
  private readonly parts: Promise<SessionParts>;
  private journal: SessionJournal | undefined;
  private wakeUp!: () => void;
  private woken: Promise<void> = this.nextWake();
  private onProgress: (() => void) | undefined;
  private stoppedWhy: string | undefined;
  private stopJournal: Promise<unknown> = Promise.resolve();
  private settled: Promise<SyncResult> | undefined;
  private finishing: Promise<SyncResult> | undefined;
  private usageError = false;
  private lineage: Promise<void> | undefined;
  private readonly follower: RemoteFollower | undefined;

  constructor(private readonly options: SyncOptions) {
    const { report } = options;
    this.client = options.api ? undefined : new ApiClient({ ...options, connections: options.concurrency + 1, report });
    this.caller = new RetryingCaller({
      report,
      host: hostOf(options.apiUrl),
      policy: options.backoff,
      wake: () => this.woken,
      onProgress: () => this.onProgress?.(),
      recovered: "the server answers again; syncing goes on",
    });
    this.remote = new ProjectRemote(options.api ?? this.client!, this.caller, { concurrency: options.concurrency, report });
    this.view = new RemoteView(this.remote, report);
    this.tree =
      options.tree ??
      new DiskTree({ root: options.root, prefix: options.prefix, ignore: options.ignore, maxFileSize: options.maxFileSize, report });
    this.announced = new AnnouncedWrites(() => (options.timers ?? realTimers).now());
    this.queue = new ChangeQueue<SyncTarget>({
      debounceMs: options.debounceMs,
      maxWaitMs: options.maxWaitMs,
      maxBatch: options.maxBatch ?? 1000,
      timers: options.timers,
      flush: (batch) => this.runBatch(batch),
      onError: (error) => report.error("sync-error", `internal error while syncing: ${errorText(error)}`),
    });
    this.parts = this.load();
    this.parts.catch(() => undefined);
    if (this.client) void this.checkProject(this.client);
    if (options.mode === "two-way") {
      this.follower = new RemoteFollower({
        view: this.view,
        report,
        changed: (path) => this.add({ remote: path, cause: "remote" }),
        fatal: (error) => this.stop(error.message),
      });
      void this.parts.then(() => this.follower?.start());
    }
  }

  private async load(): Promise<SessionParts> {
    const o = this.options;
    const store = o.store ?? fileStateStore(o.root, o.report);
    const base = await BaseKeeper.load(
      { apiUrl: o.apiUrl, projectId: o.projectId, prefix: o.prefix },
      { store, report: o.report, timers: o.timers },
    );
    this.view.pairWith(base);
    // What a pull killed mid-write left (the simulation's tree is in memory).
    if (!o.tree) await removeOwnTemps(o.root);
    const tree = this.tree;
    const gitClean = o.tree ? undefined : () => gitCleanFiles((tree as DiskTree).dir);
    const reconciler = new Reconciler({
      tree,
      remote: this.remote,
      view: this.view,
      base,
      report: o.report,
      source: o.source,
      host: o.host ?? os.hostname(),
      maxFileSize: o.maxFileSize,
      timers: o.timers,
      gitClean,
    });
    this.journal = createSessionJournal({
      apiUrl: o.apiUrl,
      projectId: o.projectId,
      root: o.root,
      report: o.report,
      ledger: reconciler.ledger,
      unsynced: this.unsynced,
    });
    return { base, reconciler };
  }

  /** The project does not exist (and --create was not given): a usage error, said with the nearest ids. */
  private async checkProject(client: ApiClient): Promise<void> {
    try {
      await withProject(client, this.options.projectId, this.options.create === true, this.options.report, () =>
        this.view.ensure(this.controller.signal),
      );
      // Only for a project that exists (the state file would remember a mistyped id), and without
      // holding the session up while a server does not answer.
      await (await this.parts).base.markClock();
      await this.historyChecked();
    } catch (error) {
      if (error instanceof ApiError && error.fatal) return this.stop(error.message); // 401, 403, a redirect: no round asks again
      if (!(error instanceof UsageError)) return; // the rounds retry and say it
      this.usageError = true;
      this.stop(error.hint ? `${error.message} (${error.hint})` : error.message);
    }
  }

  /**
   * Before the first round: a server whose history does not extend this tree's is refused (a
   * fatal RewoundError: the session stops, its changes go to the journal). Asked again after a
   * failure to ask.
   */
  private historyChecked(): Promise<void> {
    this.lineage ??= (async () => {
      const { base } = await this.parts;
      await this.view.ensure(this.controller.signal);
      await checkLineage(base.base, { view: this.view, remote: this.remote, report: this.options.report }, this.controller.signal);
    })().catch((error: unknown) => {
      this.lineage = undefined;
      throw error;
    });
    return this.lineage;
  }

  /** The refusal of a server whose history does not extend this tree's, once asked; undefined when it does, or when it could not be asked. */
  async historyRefusal(): Promise<string | undefined> {
    try {
      await this.historyChecked();
      return undefined;
    } catch (error) {
      return error instanceof RewoundError ? error.message : undefined;
    }
  }

  /** Why syncing stopped (401/403/404/redirect/protocol), once it has. */
  get stopped(): string | undefined {
    return this.stoppedWhy;
  }

  /** True while requests fail and are being retried. */
  get degraded(): boolean {
    return this.caller.degraded;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The reconciler and the base, once loaded (scans use them). */
  ready(): Promise<SessionParts> {
    return this.parts;
  }

  /** Goes through the debounced queue; the path is decided when its batch is flushed. */
  add(target: SyncTarget): void {
    if (this.settled) {
      this.options.report.debug("late-change", `${target.remote} changed after the session ended; not synced`, { path: target.remote });
      return;
    }
    if (this.stoppedWhy) return this.markUnsynced(target.remote, this.stoppedWhy);
    const waiting = this.queue.waiting(target.remote);
    if (target.cause === "fs") {
      // The echo of a write whose event waits already: the batch reads the file anyway.
      if (this.announced.isEcho(target.remote) && waiting !== undefined) return;
    } else if (target.cause !== "scan" && target.cause !== "remote") this.announced.announce(target.remote);
    // Evidence of a delete (an event) is not lost to a later scan's finding of the same path.
    this.queue.add(target.remote, waiting && waiting.cause !== "scan" && target.cause === "scan" ? waiting : target);
  }

  /** Cuts every retry wait short: they try again at once (stdin ended, flush now). */
  wake(): void {
    this.wakeUp();
    this.woken = this.nextWake();
  }

  /** Stdin ended: flush at once, wait up to `timeoutMs`, journal what is still unsynced and sum up. Idempotent. */
  finish(timeoutMs: number, finishOptions: FinishOptions = {}): Promise<SyncResult> {
    void this.follower?.stop();
    this.finishing ??= drainWithDeadline({
      queue: this.queue,
      requests: this,
      signal: this.controller.signal,
      timeoutMs,
      idle: finishOptions.idle === true,
      longTransferDeadline: () => this.client?.longTransferDeadline(),
      onProgress: (rearm) => (this.onProgress = rearm),
      expire: (reason) => this.abortWith(reason),
    }).then(() => this.settle());
    return this.finishing;
  }

  /** Second signal: journal everything pending or in flight at once and sum up. */
  abort(): Promise<SyncResult> {
    void this.follower?.stop();
    this.abortWith("interrupted before it was synced");
    return this.settle();
  }

  /** A fatal answer: no more requests; what is unsynced goes to the journal now. */
  stop(message: string): void {
    if (this.stoppedWhy) return;
    this.stoppedWhy = message;
    void this.follower?.stop();
    this.options.report.error(
      "sync-stopped",
      `${message}. Syncing is stopped for this session; unsynced changes are kept in ${journalPath(this.options.root)}`,
      { reason: message },
    );
    this.queue.close();
    for (const target of this.queue.takePending().values()) this.markUnsynced(target.remote, message);
    this.controller.abort(new SyncInterrupted(message));
    this.stopJournal = this.parts.then(() => this.journal!.write(false)).catch((error) => this.journal?.failed(error));
    this.options.onStopped?.(message);
  }

  private async runBatch(batch: Map<string, SyncTarget>): Promise<void> {
    this.announced.forget(batch.keys());
    const targets = [...batch.values()];
    if (this.stoppedWhy || this.settled) {
      for (const t of targets) this.markUnsynced(t.remote, this.stoppedWhy ?? "the session had ended");
      return;
    }
    try {
      const { reconciler } = await this.parts;
      await this.historyChecked();
      const evidence = new Set(targets.filter((t) => t.cause !== "scan").map((t) => t.remote));
      const round = await reconciler.round(
        { mode: this.options.mode ?? "push", paths: targets.map((t) => t.remote), evidence },
        this.controller.signal,
      );
      if (this.settled) return;
      this.sayPulled(round);
      // A remote path this client refuses (a file and a directory under one name): never synced, so not left unsaid.
      for (const { path, reason } of round.outOfScope.filter((o) => o.refused)) this.markUnsynced(path, reason);
      // Unless a newer change of the same path is already waiting, try again in the next batch; a
      // scan's finding waiting meanwhile does not take the place of an event's (its evidence: a
      // symlink swapped in under an event's path is then said, not passed over).
      for (const path of round.requeue) {
        const again = requeued(batch.get(path) ?? { remote: path, cause: "retry" }, this.queue.waiting(path));
        if (again) this.queue.add(path, again);
      }
    } catch (error) {
      this.batchFailed(targets, error);
    }
  }

  /** A two-way watch says what it wrote here, as it says what it commits: one line a round. */
  private sayPulled({ local, version }: RoundResult): void {
    if (local.written.length + local.removed.length === 0) return;
    this.options.report.info("pulled", versionLine("pulled", version, local.written, local.removed), {
      version,
      files: local.written,
      deleted: local.removed,
    });
  }

  private batchFailed(targets: SyncTarget[], error: unknown): void {
    if (this.controller.signal.aborted) {
      for (const t of targets) this.markUnsynced(t.remote, errorText(this.controller.signal.reason));
      return;
    }
    if (error instanceof ApiError && error.fatal) {
      for (const t of targets) this.markUnsynced(t.remote, error.message);
      return this.stop(error.message);
    }
    const reason = errorText(error);
    this.options.report.warn("batch-failed", `batch not synced: ${reason}`, { paths: targets.map((t) => t.remote) });
    for (const t of targets) this.markUnsynced(t.remote, reason);
  }

  private markUnsynced(path: string, reason: string): void {
    this.unsynced.set(path, { local: this.tree.where(path), reason });
  }

  private abortWith(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new SyncInterrupted(reason));
  }

  /** Once: everything not synced by now is unsynced; journal it, close the client, sum up. */
  private settle(): Promise<SyncResult> {
    this.settled ??= (async () => {
      this.queue.close();
      const why = this.controller.signal.aborted ? errorText(this.controller.signal.reason) : "the session ended first";
      for (const target of this.queue.peekInFlight()?.values() ?? []) this.markUnsynced(target.remote, why);
      for (const target of this.queue.takePending().values()) this.markUnsynced(target.remote, why);
      this.abortWith(why);
      await this.stopJournal;
      const parts = await this.parts.catch(() => undefined);
      let journaled = 0;
      try {
        await this.journal?.write(true);
        journaled = this.journal?.count ?? 0;
      } catch (error) {
        this.journal?.failed(error);
      }
      await this.client?.close();
      await parts?.base.close();
      const result = summarize(parts?.reconciler.ledger ?? new Ledger(), this.unsynced, journaled, this.stoppedWhy);
      if (this.usageError) result.usage = true;
      return result;
    })();
    return this.settled;
  }

  private nextWake(): Promise<void> {
    return new Promise<void>((resolve) => (this.wakeUp = resolve));
  }
}

/**
 * What to queue again for a path its round gave back, given what waits for it already: nothing
 * over a newer change, but an event's target over a scan's finding (the event is evidence).
 */
export function requeued(retry: SyncTarget, waiting: SyncTarget | undefined): SyncTarget | undefined {
  if (!waiting) return retry;
  return waiting.cause === "scan" && retry.cause !== "scan" ? retry : undefined;
}

export function createSyncSession(options: SyncOptions): SyncSession {
  return new SyncSession(options);
}
