// The PostgreSQL store behind `uspark serve --db URL`: everything in the database, so any number
// of replicas can serve one project set. A commit is one transaction holding the project row's
// lock: commits to a project serialize and versions grow without gaps.

import type { Pool } from "pg";
import type { Change, CommitFeed, CommitRequest, CommitSource, ProjectSummary } from "../../api/types.js";
import { chainHash } from "../../api/chain.js";
import { blobsNamed, checkCommit, pathsPut, pathsToCheck, requestFingerprint } from "../commit-check.js";
import {
  ProjectNotFoundError,
  StoreUnavailableError,
  type AppendOutcome,
  type BlobPart,
  type BodyFeed,
  type CommitOutcome,
  type FeedQuery,
  type FileEntry,
  type ProjectStore,
  type SessionInfo,
  type StoredBytes,
} from "../store.js";
import { CommitWaiters } from "../waiters.js";
import { blobSizes, dropStaleUploads, readBlob, writeBlob, writeBlobs } from "./blobs.js";
import { redactCredentials } from "../../report/reporter.js";
import { createPool, guarded, transaction } from "./db.js";
import { PgCredentials } from "./credentials.js";
import { migrate, pendingMigrations } from "./migrations.js";
import { chainAt } from "./chains.js";
import { CommitListener, notifyCommit } from "./notify.js";
import {
  applyChanges,
  commitFeed,
  createProject,
  currentFiles,
  currentListing,
  filesAt,
  filesUnderDirs,
  headOf,
  headsOf,
  listProjects,
  refreshStatistics,
} from "./projects.js";
import { appendEvents, listSessions, readEvents } from "./transcripts.js";
import { errorText } from "../../errors/text.js";

export interface PgStoreOptions {
  onWarning?: (message: string) => void;
}

/** How often migrations are tried again while the database cannot be reached. */
const RETRY_MS = 1000;
/** How often the heads of waited projects are read again, in case a notification was lost. */
const RECHECK_MS = 2000;
/** Changes in a commit that may make file_history's statistics stale (a first push's parts). */
const LARGE_COMMIT = 100;

export class PgStore implements ProjectStore {
  private migrated = false;
  private closed = false;
  private retry?: NodeJS.Timeout;
  private readonly waiters = new CommitWaiters();
  private readonly known = new Set<string>();
  private readonly listener: CommitListener;
  private readonly recheckTimer: NodeJS.Timeout;
  readonly credentials: PgCredentials;

  private constructor(
    private readonly pool: Pool,
    url: string,
    private readonly warn: (message: string) => void,
  ) {
    this.listener = new CommitListener(
      url,
      (projectId, version) => this.waiters.committed(projectId, version),
      () => void this.recheck(),
    );
    this.recheckTimer = setInterval(() => void this.recheck(), RECHECK_MS).unref();
    this.credentials = new PgCredentials(pool, () => this.ready());
  }

  /**
   * Connects and migrates. A database that cannot be reached is not fatal: requests are answered
   * 503 while migrations are retried every second.
   */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const warn = options.onWarning ?? (() => {});
    let lastPoolError = "";
    const pool = createPool(url, (error) => {
      if (error.message !== lastPoolError) warn(`database connection lost: ${error.message}`);
      lastPoolError = error.message;
    });
    const store = new PgStore(pool, url, warn);
    await store.migrateOrRetry(redactCredentials(url));
    void store.listener.start();
    return store;
  }

  private async migrateOrRetry(where: string): Promise<void> {
    try {
      await guarded(() => migrate(this.pool));
      this.migrated = true;
      await dropStaleUploads(this.pool).catch(() => {}); // tidying only: never in the way of serving
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (!this.retry) this.warn(`${error.message} (${where}); answering 503 until it is back`);
      if (!this.closed) this.retry = setTimeout(() => void this.migrateOrRetry(where), RETRY_MS);
    }
  }

  private ready(): void {
    if (!this.migrated) throw new StoreUnavailableError("database not ready: migrations not applied yet");
  }

  async projects(): Promise<ProjectSummary[]> {
    this.ready();
    return listProjects(this.pool);
  }

  async createProject(projectId: string): Promise<ProjectSummary | undefined> {
    this.ready();
    return createProject(this.pool, projectId);
  }

  /** Projects are never deleted: one seen to exist is remembered (one query fewer a request). */
  async hasProject(projectId: string): Promise<boolean> {
    this.ready();
    if (this.known.has(projectId)) return true;
    const exists = (await headsOf(this.pool, [projectId])).length > 0;
    if (exists) this.known.add(projectId);
    return exists;
  }

  async files(projectId: string, version?: number): Promise<{ version: number; files: FileEntry[]; chain: string } | undefined> {
    this.ready();
    if (version === undefined) {
      const listing = await currentListing(this.pool, projectId);
      return { ...listing, chain: await guarded(() => chainAt(this.pool, projectId, listing.version)) };
    }
    if (version > (await headOf(this.pool, projectId))) return undefined;
    return {
      version,
      files: await filesAt(this.pool, projectId, version),
      chain: await guarded(() => chainAt(this.pool, projectId, version)),
    };
  }

  async commits(projectId: string, query: FeedQuery): Promise<CommitFeed> {
    this.ready();
    return commitFeed(this.pool, projectId, query);
  }

  async waitForCommit(projectId: string, since: number, ms: number, signal: AbortSignal): Promise<boolean> {
    this.ready();
    return this.waiters.waitPast(projectId, since, ms, signal, () => headOf(this.pool, projectId));
  }

  waiting(): number {
    return this.waiters.size;
  }

  async blobSizes(projectId: string, hashes: readonly string[]): Promise<Map<string, number>> {
    this.ready();
    return blobSizes(this.pool, projectId, hashes);
  }

  async readBlob(projectId: string, sha256: string): Promise<StoredBytes | undefined> {
    this.ready();
    return readBlob(this.pool, projectId, sha256);
  }

  async putBlob(projectId: string, sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    this.ready();
    return writeBlob(this.pool, projectId, sha256, feed);
  }

  async putBlobs(projectId: string, parts: readonly BlobPart[]): Promise<Array<"created" | "exists">> {
    this.ready();
    return writeBlobs(this.pool, projectId, parts);
  }

  /** One transaction holding the project row's lock: checks, applies, notifies every replica. */
  async commit(projectId: string, key: string, request: CommitRequest): Promise<CommitOutcome> {
    this.ready();
    // Outside the transaction: ANALYZE would hold its lock on the table until the commit ends.
    if (request.changes.length >= LARGE_COMMIT) await refreshStatistics(this.pool);
    return transaction(this.pool, async (client): Promise<CommitOutcome> => {
      const locked = await client.query<{ version: string }>("SELECT version FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
      if (!locked.rows[0]) throw new ProjectNotFoundError(projectId);
      // Read after the lock: a commit with this key that finished meanwhile is seen.
      const earlier = await client.query<{ version: string; changes: Change[]; source: CommitSource | null }>(
        "SELECT version, changes, source FROM commits WHERE project = $1 AND key = $2",
        [projectId, key],
      );
      if (earlier.rows[0])
        return replayOrReuse(earlier.rows[0], request, await chainAt(client, projectId, Number(earlier.rows[0].version)));

      const { changes, source } = request;
      const version = Number(locked.rows[0].version);
      const deletes = changes.filter((change) => change.op === "delete").length;
      const stored = {
        sizes: await blobSizes(client, projectId, blobsNamed(changes)),
        current: await currentFiles(client, projectId, pathsToCheck(changes)),
        under: await filesUnderDirs(client, projectId, pathsPut(changes), deletes + 1),
        version,
      };
      const refused = checkCommit(changes, stored);
      if (refused) return refused; // nothing written

      const chain = chainHash(await chainAt(client, projectId, version), changes);
      await applyChanges(client, projectId, version + 1, changes);
      await client.query("INSERT INTO commits (project, version, key, changes, source, chain) VALUES ($1, $2, $3, $4, $5, $6)", [
        projectId,
        version + 1,
        key,
        JSON.stringify(changes),
        source ? JSON.stringify(source) : null,
        chain,
      ]);
      await client.query("UPDATE projects SET version = $2 WHERE id = $1", [projectId, version + 1]);
      await notifyCommit(client, projectId, version + 1);
      return { kind: "committed", version: version + 1, chain };
    });
  }

  async appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome> {
    this.ready();
    return appendEvents(this.pool, projectId, sessionId, offset, bytes);
  }

  async readEvents(projectId: string, sessionId: string): Promise<StoredBytes | undefined> {
    this.ready();
    return readEvents(this.pool, projectId, sessionId);
  }

  async sessions(projectId: string): Promise<SessionInfo[]> {
    this.ready();
    return listSessions(this.pool, projectId);
  }

  async notReady(): Promise<string | undefined> {
    try {
      return await pendingMigrations(this.pool);
    } catch (error) {
      return `database not ready: ${errorText(error)}`;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.recheckTimer);
    await this.listener.close();
    await this.pool.end();
  }

  /** Reads the heads of the waited projects again: wakes whoever a lost notification left waiting. */
  private async recheck(): Promise<void> {
    if (this.waiters.size === 0 || !this.migrated) return;
    const heads = await headsOf(this.pool, this.waiters.projects()).catch(() => []); // down: the waits time out
    for (const { id, version } of heads) this.waiters.committed(id, version);
  }
}

/** The answer to a known Idempotency-Key: the first version for the same request, else a refusal. */
function replayOrReuse(
  earlier: { version: string; changes: Change[]; source: CommitSource | null },
  request: CommitRequest,
  chain: string,
): CommitOutcome {
  const first: CommitRequest =
    earlier.source === null ? { changes: earlier.changes } : { changes: earlier.changes, source: earlier.source };
  return requestFingerprint(first) === requestFingerprint(request)
    ? { kind: "replayed", version: Number(earlier.version), chain }
    : { kind: "key_reused" };
}
