import { randomUUID } from "node:crypto";
import type { Reporter } from "../report.js";
import type { Change, CommitSource } from "./api-types.js";
import { ApiError, type ApiClient } from "./client.js";
import { changedSince, readLocal, type LocalRead } from "./files.js";
import { mapLimit } from "../map-limit.js";
import { RetryingCaller, type BackoffPolicy } from "./retry.js";
import { Transfer, type UploadItem } from "./transfer.js";

/**
 * One batch, end to end: read and hash every file at flush time, compare with what the remote
 * has, upload the missing blobs in parallel, then one commit. The engine keeps the session's
 * picture of the remote tree (fetched once, lazily, then updated by our own commits) and the
 * final outcome of every path it was given.
 */

export interface SyncTarget {
  /** The path in the remote project. */
  remote: string;
  /** The real local path. */
  abs: string;
  /** Tool name or "fs". */
  cause: string;
}

export interface EngineOptions {
  root: string;
  maxFileSize: number;
  concurrency: number;
  source: CommitSource;
  report: Reporter;
  backoff?: BackoffPolicy;
  /** Files at most this large are kept in memory between hashing and upload. Default 4 MiB. */
  keepBytesUpTo?: number;
  /** A file that changes while it is read is retried this often, then reported. Default 5. */
  maxRequeues?: number;
  /** Something went through: a request was answered with success. */
  onProgress?: () => void;
  /**
   * The server holds this content at these paths (sha256 undefined: nothing), as acknowledged by
   * a commit (with its version) or seen in the remote picture: the base follows it.
   */
  onSynced?: (changes: readonly { path: string; sha256?: string }[], version?: number) => void;
  /**
   * "Nothing to do" for a path is decided on a remote picture at most this old; an older one is
   * listed again first (at most once per this interval), so another writer's change is seen.
   * Default 5000.
   */
  remoteMaxAgeMs?: number;
  /**
   * Why a path may no longer be synced, asked when its batch is read: a file detected while it
   * was visible and ignored before the flush (a .gitignore edited meanwhile) must not leave.
   */
  ignoredNow?: (target: SyncTarget) => string | undefined;
}

export type Outcome =
  | { status: "synced"; at: number }
  | { status: "skipped"; reason: string; journal: boolean; target: SyncTarget }
  | { status: "failed"; reason: string; target: SyncTarget };

export interface BatchResult {
  /** Targets that changed during the flush: they belong in the next batch. */
  requeue: SyncTarget[];
}

interface Planned {
  target: SyncTarget;
  read: Extract<LocalRead, { kind: "file" }>;
  readAt: number;
}

const KEEP_BYTES = 4 * 1024 * 1024;
const KEEP_BUDGET = 64 * 1024 * 1024;
const READ_CONCURRENCY = 8;
const MAX_BLOB_ROUNDS = 5;
const REMOTE_MAX_AGE_MS = 5000;

export class SyncEngine {
  commits = 0;
  pushed = 0;
  deleted = 0;
  unchanged = 0;
  /** Final outcome per remote path: a later success clears an earlier failure. */
  readonly outcomes = new Map<string, Outcome>();

  private remote: Map<string, string> | undefined;
  private remoteLoading: Promise<Map<string, string>> | undefined;
  /** The version our picture shows, and when it was listed. */
  private remoteVersion = 0;
  private listedAt = 0;
  private readonly blobs = new Set<string>();
  private readonly requeues = new Map<string, number>();
  private wakeUp!: () => void;
  private woken: Promise<void> = this.nextWake();
  /** Every request goes through it: retried, an outage said once and its end once. */
  private readonly caller: RetryingCaller;

  /** Blobs go up through the transfer layer (packs on v1.1, one request each on v1). */
  private readonly transfer: Transfer;

  constructor(
    private readonly client: ApiClient,
    private readonly options: EngineOptions,
  ) {
    this.caller = new RetryingCaller({
      report: options.report,
      policy: options.backoff,
      wake: () => this.woken,
      onProgress: () => this.options.onProgress?.(),
      recovered: "the server answers again; syncing goes on",
    });
    this.transfer = new Transfer(client, {
      concurrency: options.concurrency,
      report: options.report,
      known: this.blobs,
      call: (run, signal) => this.call(run, signal),
    });
  }

  /** Cuts every retry wait short: they try again at once (stdin ended, flush now). */
  wake(): void {
    this.wakeUp();
    this.woken = this.nextWake();
  }

  private nextWake(): Promise<void> {
    return new Promise<void>((resolve) => (this.wakeUp = resolve));
  }

  /** True while requests fail and are being retried (since the last success). */
  get degraded(): boolean {
    return this.caller.degraded;
  }

  /** Syncs one batch. Throws a fatal ApiError (401/403/404/redirect) or the signal's reason. */
  async syncBatch(targets: readonly SyncTarget[], signal: AbortSignal): Promise<BatchResult> {
    const { report } = this.options;
    let remote = await this.remoteTree(signal);
    const requeue: SyncTarget[] = [];
    const puts: Planned[] = [];
    const deletes: { target: SyncTarget; readAt: number }[] = [];

    // 1. Read and hash, at flush time, what may still be synced.
    let budget = KEEP_BUDGET;
    const reads = await mapLimit(targets.filter((target) => this.stillAllowed(target)), READ_CONCURRENCY, async (target) => {
      const keep = Math.max(0, Math.min(this.options.keepBytesUpTo ?? KEEP_BYTES, budget));
      const readAt = Date.now();
      const read = await readLocal(target.abs, { root: this.options.root, maxFileSize: this.options.maxFileSize, keepBytesUpTo: keep });
      if (read.kind === "file" && read.bytes) budget -= read.bytes.length;
      return { target, read, readAt };
    });
    if (reads.some(({ target, read }) => nothingToDo(remote, target, read)) && this.pictureIsOld()) {
      remote = await this.relist(signal, "to confirm a change that looks already synced");
    }
    for (const { target, read, readAt } of reads) {
      signal.throwIfAborted();
      switch (read.kind) {
        case "file":
          if (remote.get(target.remote) === read.sha256) {
            this.settle(target, { status: "synced", at: readAt });
            this.options.onSynced?.([{ path: target.remote, sha256: read.sha256 }]);
            this.unchanged++;
            report.debug("unchanged", `unchanged ${target.remote}`, { path: target.remote });
          } else {
            puts.push({ target, read, readAt });
          }
          break;
        case "missing":
          if (remote.has(target.remote)) {
            deletes.push({ target, readAt });
          } else {
            this.settle(target, { status: "synced", at: readAt });
            this.options.onSynced?.([{ path: target.remote }]);
            this.unchanged++;
            report.debug("unchanged", `${target.remote} is gone here and not in the project`, { path: target.remote });
          }
          break;
        case "changed":
          this.requeueOrFail(target, requeue, "it kept changing while it was read");
          break;
        case "too-large":
          this.skip(target, `larger than the ${formatBytes(this.options.maxFileSize)} limit (${formatBytes(read.size)})`, true);
          break;
        case "refused":
          this.skip(target, read.reason, false);
          break;
        case "error":
          this.fail(target, read.reason);
          break;
      }
    }

    // 2. Upload the blobs the server does not have yet, in parallel.
    let live = await this.uploadMissing(puts, signal, requeue);
    if (live.length === 0 && deletes.length === 0) return { requeue };

    // 3. One commit for the batch, retried with the same Idempotency-Key.
    let key = randomUUID();
    let dropped = new Set<string>();
    for (let round = 0; ; round++) {
      const changes: Change[] = [
        ...live.map(({ target, read }): Change => ({ op: "put", path: target.remote, sha256: read.sha256, size: read.size })),
        ...deletes.map(({ target }): Change => ({ op: "delete", path: target.remote })),
      ];
      if (changes.length === 0) return { requeue };
      try {
        const { version } = await this.call(() => this.client.commit(changes, this.options.source, key, signal), signal);
        this.committed(version, live, deletes);
        break;
      } catch (error) {
        if (!(error instanceof ApiError) || error.fatal || signal.aborted) throw error;
        if (error.code === "missing_blobs" && round < MAX_BLOB_ROUNDS) {
          const missing = new Set(Array.isArray(error.body?.missing) ? (error.body.missing as string[]) : []);
          for (const sha of missing) this.blobs.delete(sha);
          const before = live.length;
          live = await this.uploadMissing(live, signal, requeue, missing);
          // The same key while the batch is the same; a changed batch is a new commit.
          if (live.length !== before) key = randomUUID();
          continue;
        }
        const badPath = typeof error.body?.path === "string" ? error.body.path : undefined;
        if (badPath !== undefined && !dropped.has(badPath) && changes.some((c) => c.path === badPath)) {
          dropped = new Set(dropped).add(badPath);
          const reason = `the server refused it: ${error.message}`;
          for (const p of live) if (p.target.remote === badPath) this.fail(p.target, reason);
          for (const d of deletes) if (d.target.remote === badPath) this.fail(d.target, reason);
          live = live.filter((p) => p.target.remote !== badPath);
          deletes.splice(0, deletes.length, ...deletes.filter((d) => d.target.remote !== badPath));
          key = randomUUID();
          continue;
        }
        const reason = `commit failed: ${error.message}`;
        report.warn("commit-failed", reason, { paths: changes.map((c) => c.path) });
        for (const p of live) this.fail(p.target, reason, true);
        for (const d of deletes) this.fail(d.target, reason, true);
        return { requeue };
      }
    }

    // 4. Written while we were busy? Then the next batch takes the newer content.
    for (const { target, read } of live) {
      if (await changedSince(target.abs, read.stat)) requeue.push(target);
    }
    return { requeue };
  }

  /**
   * The remote tree, fetched on first use; afterwards kept up to date by our own commits, and
   * fetched again when a commit shows another writer or a "nothing to do" needs a fresh look.
   */
  private remoteTree(signal: AbortSignal): Promise<Map<string, string>> {
    if (this.remote) return Promise.resolve(this.remote);
    this.remoteLoading ??= this.call(() => this.client.listFiles(signal), signal).then(
      (tree) => {
        this.remoteVersion = tree.version;
        this.listedAt = Date.now();
        const map = new Map<string, string>();
        for (const file of tree.files) {
          map.set(file.path, file.sha256);
          this.blobs.add(file.sha256);
        }
        this.options.report.debug("remote", `project is at v${tree.version} with ${tree.files.length} files`, {
          version: tree.version,
          files: tree.files.length,
        });
        this.remote = map;
        this.remoteLoading = undefined;
        return map;
      },
      (error: unknown) => {
        this.remoteLoading = undefined;
        throw error;
      },
    );
    return this.remoteLoading;
  }

  private pictureIsOld(): boolean {
    return Date.now() - this.listedAt >= (this.options.remoteMaxAgeMs ?? REMOTE_MAX_AGE_MS);
  }

  /** Drops the remote picture and lists the project again. */
  private relist(signal: AbortSignal, why: string): Promise<Map<string, string>> {
    this.options.report.debug("remote", `listing the project again ${why}`);
    this.remote = undefined;
    return this.remoteTree(signal);
  }

  /** The remote paths the engine believes exist (after the first fetch). */
  async remotePaths(signal: AbortSignal): Promise<string[]> {
    return [...(await this.remoteTree(signal)).keys()];
  }

  /**
   * Makes sure the server has the blob of every planned put (only those in `only`, when given,
   * whatever we believe; else the transfer skips those known to be there). Returns the puts that
   * can go into the commit.
   */
  private async uploadMissing(puts: Planned[], signal: AbortSignal, requeue: SyncTarget[], only?: Set<string>): Promise<Planned[]> {
    const bySha = new Map<string, Planned[]>();
    for (const plan of puts) {
      const sha = plan.read.sha256;
      if (only && !only.has(sha)) continue;
      const list = bySha.get(sha) ?? [];
      list.push(plan);
      bySha.set(sha, list);
    }
    const items = [...bySha].map(([sha, plans]) => this.uploadItem(sha, plans[0]!));
    const outcomes = await this.transfer.uploadBlobs(items, signal, { force: only !== undefined });
    const dropped = new Set<Planned>();
    for (const [sha, plans] of bySha) {
      const result = outcomes.get(sha) ?? "ok";
      if (result === "ok") continue;
      for (const plan of plans) {
        dropped.add(plan);
        if (result === "changed") this.requeueOrFail(plan.target, requeue, "it kept changing while it was uploaded");
        else if (result === "too-large") this.skip(plan.target, "the server refused it as too large (413)", true);
        else this.fail(plan.target, result.reason);
      }
    }
    for (const plan of puts) if (!dropped.has(plan)) plan.read.bytes = undefined;
    return puts.filter((plan) => !dropped.has(plan));
  }

  /** A blob for the transfer layer: the bytes kept from hashing, or a safe re-read checked against the hash. */
  private uploadItem(sha: string, first: Planned): UploadItem {
    return {
      sha256: sha,
      size: first.read.size,
      bytes: first.read.bytes,
      load: async () => {
        const again = await readLocal(first.target.abs, {
          root: this.options.root,
          maxFileSize: this.options.maxFileSize,
          keepBytesUpTo: Number.MAX_SAFE_INTEGER,
        });
        return again.kind === "file" && again.sha256 === sha ? again.bytes : undefined;
      },
    };
  }

  private committed(version: number, puts: Planned[], deletes: { target: SyncTarget; readAt: number }[]): void {
    const remote = this.remote!;
    // Our commit moves the version by one: more means someone else wrote; list again next batch.
    const otherWriter = version > this.remoteVersion + 1;
    this.remoteVersion = version;
    for (const { target, read, readAt } of puts) {
      remote.set(target.remote, read.sha256);
      this.settle(target, { status: "synced", at: readAt });
    }
    for (const { target, readAt } of deletes) {
      remote.delete(target.remote);
      this.settle(target, { status: "synced", at: readAt });
    }
    this.options.onSynced?.(
      [...puts.map(({ target, read }) => ({ path: target.remote, sha256: read.sha256 })), ...deletes.map(({ target }) => ({ path: target.remote }))],
      version,
    );
    if (otherWriter) {
      this.options.report.debug("remote", `the project moved to v${version}: another writer; its listing is fetched again`, { version });
      this.remote = undefined;
    }
    this.commits++;
    this.pushed += puts.length;
    this.deleted += deletes.length;
    const files = puts.map((p) => p.target.remote);
    const deleted = deletes.map((d) => d.target.remote);
    this.options.report.info("commit", commitLine(version, files, deleted), { version, files, deleted });
  }

  /** A request with retries; says once when the server starts failing and once when it is back. */
  private call<T>(run: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.caller.call(run, signal);
  }

  /** False (and settled: there is nothing to sync) when the policy now refuses the path. */
  private stillAllowed(target: SyncTarget): boolean {
    const reason = this.options.ignoredNow?.(target);
    if (reason === undefined) return true;
    this.settle(target, { status: "synced", at: Date.now() });
    this.options.report.debug("refused", `${reason} (decided when its batch was read)`, { path: target.remote });
    return false;
  }

  private settle(target: SyncTarget, outcome: Outcome): void {
    if (outcome.status === "synced") this.requeues.delete(target.remote);
    this.outcomes.set(target.remote, outcome);
  }

  private skip(target: SyncTarget, reason: string, journal: boolean): void {
    this.options.report.warnOnce(target.abs, "skipped", `not synced ${target.remote}: ${reason}`, { path: target.remote, reason });
    this.settle(target, { status: "skipped", reason, journal, target });
  }

  /** Not synced, for a reason a later try may not share: it is reported and journaled. */
  fail(target: SyncTarget, reason: string, quiet = false): void {
    if (!quiet) this.options.report.warnOnce(target.abs, "failed", `not synced ${target.remote}: ${reason}`, { path: target.remote, reason });
    this.settle(target, { status: "failed", reason, target });
  }

  private requeueOrFail(target: SyncTarget, requeue: SyncTarget[], reason: string): void {
    const count = (this.requeues.get(target.remote) ?? 0) + 1;
    this.requeues.set(target.remote, count);
    if (count > (this.options.maxRequeues ?? 5)) {
      this.requeues.delete(target.remote);
      this.fail(target, reason);
      return;
    }
    this.options.report.debug("requeue", `${target.remote} changed during the flush; it goes into the next batch`, { path: target.remote });
    requeue.push(target);
  }
}

/** Would this read need no request, judging by `remote`? (Then the picture must be fresh enough.) */
function nothingToDo(remote: Map<string, string>, target: SyncTarget, read: LocalRead): boolean {
  if (read.kind === "file") return remote.get(target.remote) === read.sha256;
  return read.kind === "missing" && !remote.has(target.remote);
}

/** `committed v8: 3 files (src/a.ts, src/b.ts, old.txt deleted)` */
export function commitLine(version: number, files: readonly string[], deleted: readonly string[]): string {
  const names = [...files, ...deleted.map((d) => `${d} deleted`)];
  const total = names.length;
  const shown = names.slice(0, 3).join(", ") + (total > 3 ? `, … ${total - 3} more` : "");
  return `committed v${version}: ${total} ${total === 1 ? "file" : "files"} (${shown})`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, "")} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MiB`;
}
