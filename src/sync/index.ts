import { access } from "node:fs/promises";
import type { Reporter } from "../report.js";
import { ApiClient, ApiError } from "./client.js";
import { SyncEngine, type SyncTarget } from "./engine.js";
import { journalPath, updateJournal, type JournalEntry, type SyncedPath } from "./journal.js";
import { ChangeQueue, type Timers } from "./queue.js";
import type { BackoffPolicy } from "./retry.js";

/**
 * A sync session: the change queue in front of the engine, the deadline at the end, and the
 * journal of whatever could not be synced. This is what the watcher and `uspark push` use.
 */

export type { SyncTarget } from "./engine.js";
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
   * deadline of a whole request (larger transfers get more: see requestDeadlineMs).
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
}

export interface SyncResult {
  /** Commits made. */
  commits: number;
  /** File contents committed (a file committed three times counts three times). */
  pushed: number;
  /** Remote files deleted. */
  deleted: number;
  /** Changes that needed no request: the remote already had that content, or nothing to delete. */
  unchanged: number;
  /** Not synced by rule: too large, a symlink, not a regular file. Final state per path. */
  skipped: { remote: string; reason: string }[];
  /** Not synced because something went wrong, or time ran out. Final state per path. */
  failed: { remote: string; reason: string }[];
  /** Entries this session wrote to the journal. */
  journaled: number;
  /** Why syncing stopped early (401/403/404/redirect), if it did. */
  stopped?: string;
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
}

/** Why a batch was cut short: the end-of-input deadline, or an interrupt. */
export class SyncInterrupted extends Error {
  override readonly name = "SyncInterrupted";
}

export function createSyncSession(options: SyncOptions): SyncSession {
  const { report } = options;
  const root = options.root;
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
  });
  /** Not synced because time ran out or syncing stopped: remote path → why. */
  const unsynced = new Map<string, { target: SyncTarget; reason: string }>();
  let stopped: string | undefined;
  let settled: Promise<SyncResult> | undefined;
  let finishing: Promise<SyncResult> | undefined;
  let stopJournal: Promise<unknown> = Promise.resolve();
  let journaledKeys = new Set<string>();

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
      if (controller.signal.aborted) {
        for (const t of targets) markUnsynced(t, reasonOf(controller.signal.reason));
        return;
      }
      if (error instanceof ApiError && error.fatal) {
        for (const t of targets) markUnsynced(t, error.message);
        stop(error.message);
        return;
      }
      const reason = describe(error);
      report.warn("batch-failed", `batch not synced: ${reason}`, { paths: targets.map((t) => t.remote) });
      for (const t of targets) engine.fail(t, describe(error), true);
    }
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
    stopJournal = writeJournal(false).catch((error) => journalError(error));
  }

  function abortWith(reason: string): void {
    if (!controller.signal.aborted) controller.abort(new SyncInterrupted(reason));
  }

  /** Journals what is not synced (adding the newest), and clears entries settled by this session. */
  async function writeJournal(final: boolean): Promise<number> {
    const now = new Date().toISOString();
    const add: JournalEntry[] = [];
    const entry = (target: SyncTarget, reason: string): JournalEntry => ({
      apiUrl: options.apiUrl,
      projectId: options.projectId,
      path: target.remote,
      local: target.abs,
      reason,
      time: now,
    });
    for (const [remote, outcome] of engine.outcomes) {
      if (outcome.status === "failed" || (outcome.status === "skipped" && outcome.journal)) {
        if (!unsynced.has(remote)) add.push(entry(outcome.target, outcome.reason));
      }
    }
    for (const { target, reason } of unsynced.values()) add.push(entry(target, reason));
    const synced: SyncedPath[] = [];
    if (final) {
      for (const [remote, outcome] of engine.outcomes) {
        if (outcome.status === "synced" && !unsynced.has(remote)) {
          synced.push({ apiUrl: options.apiUrl, projectId: options.projectId, path: remote, at: outcome.at });
        }
      }
    }
    if (add.length === 0 && synced.length === 0) return 0;
    if (add.length === 0 && !(await journalExists())) return 0;
    await updateJournal(root, { add, synced }, report);
    journaledKeys = new Set([...journaledKeys, ...add.map((e) => e.path)]);
    return add.length;
  }

  async function journalExists(): Promise<boolean> {
    return access(journalPath(root)).then(
      () => true,
      () => false,
    );
  }

  function journalError(error: unknown): void {
    report.error("journal-failed", `could not write the journal ${journalPath(root)}: ${describe(error)}`);
  }

  /** Once: everything not synced by now is unsynced; journal it, close the client, sum up. */
  function settle(): Promise<SyncResult> {
    settled ??= (async () => {
      queue.close();
      const why = controller.signal.aborted ? reasonOf(controller.signal.reason) : "the session ended first";
      for (const target of queue.peekInFlight()?.values() ?? []) markUnsynced(target, why);
      for (const target of queue.takePending().values()) markUnsynced(target, why);
      controller.abort(new SyncInterrupted(why));
      await stopJournal;
      let journaled = 0;
      try {
        await writeJournal(true);
        journaled = journaledKeys.size;
      } catch (error) {
        journalError(error);
      }
      await client.close();
      return summary(journaled);
    })();
    return settled;
  }

  function summary(journaled: number): SyncResult {
    const skipped: SyncResult["skipped"] = [];
    const failed: SyncResult["failed"] = [];
    for (const [remote, outcome] of engine.outcomes) {
      if (unsynced.has(remote)) continue;
      if (outcome.status === "skipped") skipped.push({ remote, reason: outcome.reason });
      if (outcome.status === "failed") failed.push({ remote, reason: outcome.reason });
    }
    for (const [remote, { reason }] of unsynced) failed.push({ remote, reason });
    const result: SyncResult = {
      commits: engine.commits,
      pushed: engine.pushed,
      deleted: engine.deleted,
      unchanged: engine.unchanged,
      skipped,
      failed,
      journaled,
    };
    if (stopped) result.stopped = stopped;
    return result;
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
      finishing ??= (async () => {
        const reason = `still unsynced when the flush timeout (${timeoutMs} ms) ran out`;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const arm = (ms = timeoutMs) => {
          if (timer) clearTimeout(timer);
          timer = setTimeout(() => {
            // Idle mode: a large transfer under way (within its own hard deadline) while nothing
            // fails is progress; a small request that trickles its answer is not (defect 18).
            const until = finishOptions.idle && !engine.degraded ? client.longTransferDeadline() : undefined;
            if (until !== undefined && until > Date.now()) arm(until - Date.now());
            else abortWith(reason);
          }, ms);
        };
        if (finishOptions.idle) onProgress = () => arm();
        arm();
        const aborted = new Promise<void>((resolve) => {
          if (controller.signal.aborted) resolve();
          controller.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        engine.wake(); // a retry waiting out its backoff tries again now
        try {
          await Promise.race([queue.drain(), aborted]);
          // An interrupted batch gives up quickly (its requests and waits are aborted); let it
          // record what it was doing, but never wait long for it.
          if (controller.signal.aborted) await Promise.race([queue.idle(), delay(1000)]);
        } finally {
          clearTimeout(timer);
          onProgress = undefined;
        }
        return settle();
      })();
      return finishing;
    },

    abort() {
      abortWith("interrupted before it was synced");
      return settle();
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

function reasonOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

