import type { Reporter } from "../report.js";
import { BaseKeeper, type BaseView } from "./base-keeper.js";
import { ApiClient, ApiError } from "./client.js";
import { drainWithDeadline } from "./deadline.js";
import { SyncEngine, type SyncTarget } from "./engine.js";
import { journalPath } from "./journal.js";
import { summarize, type SyncResult } from "./outcome.js";
import { ChangeQueue, type Timers } from "./queue.js";
import type { BackoffPolicy } from "./retry.js";
import { createSessionJournal, describe, type Unsynced } from "./session-journal.js";

/**
 * A sync session: the change queue in front of the engine, the deadline at the end, and the
 * journal of whatever could not be synced. This is what the watcher and `uspark push` use.
 */

export type { SyncTarget } from "./engine.js";
export type { SyncResult } from "./outcome.js";
export type { BaseView } from "./base-keeper.js";
export { ApiClient, ApiError } from "./client.js";
export { remindOfPending } from "./journal.js";

export interface SyncOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  /** The real path of the project root. */
  root: string;
  /**
   * Request timeout, ms (default 30000): the idle limit for headers and body, and the least hard
   * deadline of a whole request (larger transfers get more: see requestDeadlineMs; an upload's
   * wait for the headers also gets the time its body takes to send).
   */
  requestTimeoutMs: number;
  /** Bytes; larger files are not synced (reported, journaled). Default 50 MiB. */
  maxFileSize: number;
  /** Parallel blob uploads. Default 4. */
  concurrency: number;
  debounceMs: number;
  maxWaitMs: number;
  source: { agent: string; sessionId?: string };
  report: Reporter;
  /** Most changes in one commit. Default 1000. */
  maxBatch?: number;
  /** Backoff tuning (tests). */
  backoff?: BackoffPolicy;
  /** Clock for the queue (tests). */
  timers?: Timers;
  /** When the watch started (ms since the epoch): without a base, older files count as synced. Default: now. */
  startedAt?: number;
  /** A "nothing to do" is decided on a remote listing at most this old (ms). Default 5000. */
  remoteMaxAgeMs?: number;
  /** Why a path may no longer be synced (ignored since it was detected), asked at flush time. */
  ignoredNow?: (target: SyncTarget) => string | undefined;
}

export interface FinishOptions {
  /**
   * The timeout counts from the last request that went through, not from the call, and does
   * not cut off a large transfer within its own hard deadline (push: a large tree takes as long
   * as it takes, but a server that stays down, or trickles its answers, ends it).
   */
  idle?: boolean;
}

export interface SyncSession {
  /** Goes through the debounced queue; the file is read when its batch is flushed. */
  add(target: SyncTarget): void;
  /**
   * Stdin ended: flush at once, wait up to `timeoutMs`, journal what is still unsynced and return
   * the summary (listing it is the caller's job). Idempotent.
   */
  finish(timeoutMs: number, options?: FinishOptions): Promise<SyncResult>;
  /** Second signal: journal everything pending or in flight at once and return. */
  abort(): Promise<SyncResult>;
  /** Why syncing stopped (401/403/404/redirect), once it has. */
  readonly stopped: string | undefined;
  /**
   * The remote project's paths as this session knows them (fetched once, then kept up to date
   * by its commits). Rejects when syncing stopped or the session ended.
   */
  listRemote(): Promise<string[]>;
  /**
   * What this machine last synced or pulled (state.json), kept up to date by this session's
   * commits: what a scan compares the tree with.
   */
  base(): Promise<BaseView>;
}

/** Why a batch was cut short: the end-of-input deadline, or an interrupt. */
export class SyncInterrupted extends Error {
  override readonly name = "SyncInterrupted";
}

export function createSyncSession(options: SyncOptions): SyncSession {
  const { report, root } = options;
  const controller = new AbortController();
  const client = new ApiClient({
    apiUrl: options.apiUrl,
    projectId: options.projectId,
    token: options.token,
    requestTimeoutMs: options.requestTimeoutMs,
    connections: options.concurrency + 1,
    report,
  });
  let onProgress: (() => void) | undefined;
  const engine = new SyncEngine(client, {
    root,
    maxFileSize: options.maxFileSize,
    concurrency: options.concurrency,
    source: options.source,
    report,
    backoff: options.backoff,
    onProgress: () => onProgress?.(),
    onSynced: (changes, version) => void keeper.then((base) => base.record(changes, version)),
    remoteMaxAgeMs: options.remoteMaxAgeMs,
    ignoredNow: options.ignoredNow,
  });
  const keeper = BaseKeeper.load({ root, apiUrl: options.apiUrl, projectId: options.projectId, report, startedAt: options.startedAt ?? Date.now() });
  const unsynced: Unsynced = new Map();
  const journal = createSessionJournal({ apiUrl: options.apiUrl, projectId: options.projectId, root, report, engine, unsynced });
  let stopped: string | undefined;
  let settled: Promise<SyncResult> | undefined;
  let finishing: Promise<SyncResult> | undefined;
  let stopJournal: Promise<unknown> = Promise.resolve();

  const queue = new ChangeQueue<SyncTarget>({
    debounceMs: options.debounceMs,
    maxWaitMs: options.maxWaitMs,
    maxBatch: options.maxBatch ?? 1000,
    timers: options.timers,
    flush: runBatch,
    onError: (error) => report.error("sync-error", `internal error while syncing: ${describe(error)}`),
  });

  async function runBatch(batch: Map<string, SyncTarget>): Promise<void> {
    const targets = [...batch.values()];
    if (stopped || settled) {
      for (const t of targets) markUnsynced(t, stopped ?? "the session had ended");
      return;
    }
    try {
      const { requeue } = await engine.syncBatch(targets, controller.signal);
      if (settled) return;
      // Unless a newer change of the same path is already waiting, try again in the next batch.
      const waiting = queue.peekPending();
      for (const target of requeue) if (!waiting.has(target.remote)) queue.add(target.remote, target);
    } catch (error) {
      batchFailed(targets, error);
    }
  }

  function batchFailed(targets: SyncTarget[], error: unknown): void {
    if (controller.signal.aborted) {
      for (const t of targets) markUnsynced(t, describe(controller.signal.reason));
      return;
    }
    if (error instanceof ApiError && error.fatal) {
      for (const t of targets) markUnsynced(t, error.message);
      stop(error.message);
      return;
    }
    const reason = describe(error);
    report.warn("batch-failed", `batch not synced: ${reason}`, { paths: targets.map((t) => t.remote) });
    for (const t of targets) engine.fail(t, reason, true);
  }

  function markUnsynced(target: SyncTarget, reason: string): void {
    unsynced.set(target.remote, { target, reason });
  }

  /** 401/403/404/redirect: one error, no more requests; what is unsynced goes to the journal now. */
  function stop(message: string): void {
    if (stopped) return;
    stopped = message;
    report.error(
      "sync-stopped",
      `${message}. Syncing is stopped for this session (the agent's output still passes through); ` +
        `unsynced changes are kept in ${journalPath(root)}`,
      { reason: message },
    );
    queue.close();
    for (const target of queue.takePending().values()) markUnsynced(target, message);
    controller.abort(new SyncInterrupted(message));
    stopJournal = journal.write(false).catch((error) => journal.failed(error));
  }

  function abortWith(reason: string): void {
    if (!controller.signal.aborted) controller.abort(new SyncInterrupted(reason));
  }

  /** Once: everything not synced by now is unsynced; journal it, close the client, sum up. */
  function settle(): Promise<SyncResult> {
    settled ??= (async () => {
      queue.close();
      const why = controller.signal.aborted ? describe(controller.signal.reason) : "the session ended first";
      for (const target of queue.peekInFlight()?.values() ?? []) markUnsynced(target, why);
      for (const target of queue.takePending().values()) markUnsynced(target, why);
      controller.abort(new SyncInterrupted(why));
      await stopJournal;
      let journaled = 0;
      try {
        await journal.write(true);
        journaled = journal.count;
      } catch (error) {
        journal.failed(error);
      }
      await client.close();
      await (await keeper).close();
      return summarize(engine, unsynced, journaled, stopped);
    })();
    return settled;
  }

  return {
    get stopped() {
      return stopped;
    },

    add(target) {
      if (settled) {
        report.debug("late-change", `${target.remote} changed after the session ended; not synced`, { path: target.remote });
        return;
      }
      if (stopped) {
        markUnsynced(target, stopped);
        return;
      }
      queue.add(target.remote, target);
    },

    finish(timeoutMs, finishOptions = {}) {
      finishing ??= drainWithDeadline({
        queue,
        engine,
        signal: controller.signal,
        timeoutMs,
        idle: finishOptions.idle === true,
        longTransferDeadline: () => client.longTransferDeadline(),
        onProgress: (rearm) => (onProgress = rearm),
        expire: abortWith,
      }).then(settle);
      return finishing;
    },

    abort() {
      abortWith("interrupted before it was synced");
      return settle();
    },

    base() {
      return keeper;
    },

    async listRemote() {
      if (stopped) throw new SyncInterrupted(stopped);
      try {
        return await engine.remotePaths(controller.signal);
      } catch (error) {
        if (error instanceof ApiError && error.fatal) stop(error.message);
        throw error;
      }
    },
  };
}
