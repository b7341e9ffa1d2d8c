// The PostgreSQL store behind `uspark serve --db URL`: everything in the database, so any number
// of replicas can serve one project set. A commit is one transaction holding the project row's
// lock: commits to a project serialize and versions grow without gaps.

import type { ClientBase, Pool } from "pg";
import { blobsNamed, checkBlobs } from "../commit-check.js";
import { StoreUnavailableError, type AppendOutcome, type BodyFeed, type CommitOutcome, type FileEntry, type ProjectStore } from "../store.js";
import type { Change, CommitSource } from "../validate.js";
import { blobSizes, readBlob, writeBlob } from "./blobs.js";
import { redactCredentials } from "../../report.js";
import { createPool, guarded, transaction } from "./db.js";
import { migrate, pendingMigrations } from "./migrations.js";
import { appendEvents, listSessions, readEvents } from "./transcripts.js";

export interface PgStoreOptions {
  onWarning?: (message: string) => void;
}

/** How often migrations are tried again while the database cannot be reached. */
const RETRY_MS = 1000;

export class PgStore implements ProjectStore {
  private migrated = false;
  private closed = false;
  private retry?: NodeJS.Timeout;

  private constructor(
    private readonly pool: Pool,
    private readonly warn: (message: string) => void,
  ) {}

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
    const store = new PgStore(pool, warn);
    await store.migrateOrRetry(redactCredentials(url));
    return store;
  }

  private async migrateOrRetry(where: string): Promise<void> {
    try {
      await guarded(() => migrate(this.pool));
      this.migrated = true;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      if (!this.retry) this.warn(`${error.message} (${where}); answering 503 until it is back`);
      if (!this.closed) this.retry = setTimeout(() => void this.migrateOrRetry(where), RETRY_MS);
    }
  }

  private ready(): void {
    if (!this.migrated) throw new StoreUnavailableError("database not ready: migrations not applied yet");
  }

  async files(projectId: string): Promise<{ version: number; files: FileEntry[] }> {
    this.ready();
    // One statement: the version and the files come from one snapshot.
    const { rows } = await guarded(() =>
      this.pool.query<{ version: string; path: string | null; sha256: string; size: string }>(
        `SELECT p.version, f.path, f.sha256, f.size FROM projects p LEFT JOIN files f ON f.project = p.id
         WHERE p.id = $1 ORDER BY f.path COLLATE "C"`,
        [projectId],
      ),
    );
    if (rows.length === 0) return { version: 0, files: [] };
    const files = rows.flatMap((r) => (r.path === null ? [] : [{ path: r.path, sha256: r.sha256, size: Number(r.size) }]));
    return { version: Number(rows[0]!.version), files };
  }

  async blobSizes(hashes: readonly string[]): Promise<Map<string, number>> {
    this.ready();
    return blobSizes(this.pool, hashes);
  }

  async readBlob(sha256: string): Promise<Blob | undefined> {
    this.ready();
    return readBlob(this.pool, sha256);
  }

  async putBlob(sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    this.ready();
    return writeBlob(this.pool, sha256, feed);
  }

  async commit(projectId: string, key: string, changes: Change[], source?: CommitSource): Promise<CommitOutcome> {
    this.ready();
    return transaction(this.pool, async (client): Promise<CommitOutcome> => {
      await client.query("INSERT INTO projects (id) VALUES ($1) ON CONFLICT DO NOTHING", [projectId]);
      const locked = await client.query<{ version: string }>("SELECT version FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
      // Read after the lock: a commit with this key that finished meanwhile is seen.
      const earlier = await client.query<{ version: string }>("SELECT version FROM commits WHERE project = $1 AND key = $2", [
        projectId,
        key,
      ]);
      if (earlier.rows.length > 0) return { kind: "replayed", version: Number(earlier.rows[0]!.version) };

      const refused = checkBlobs(changes, await blobSizes(client, blobsNamed(changes)));
      if (refused) throw new Refusal(refused);

      const version = Number(locked.rows[0]!.version) + 1;
      await applyChanges(client, projectId, changes);
      await client.query("INSERT INTO commits (project, version, key, changes, source) VALUES ($1, $2, $3, $4, $5)", [
        projectId,
        version,
        key,
        JSON.stringify(changes),
        source ? JSON.stringify(source) : null,
      ]);
      await client.query("UPDATE projects SET version = $2 WHERE id = $1", [projectId, version]);
      return { kind: "committed", version };
    }).catch((error: unknown) => {
      if (error instanceof Refusal) return error.outcome;
      throw error;
    });
  }

  async appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome> {
    this.ready();
    return appendEvents(this.pool, projectId, sessionId, offset, bytes);
  }

  async readEvents(projectId: string, sessionId: string): Promise<Buffer | undefined> {
    this.ready();
    return readEvents(this.pool, projectId, sessionId);
  }

  async sessions(projectId: string): Promise<{ id: string; length: number }[]> {
    this.ready();
    return listSessions(this.pool, projectId);
  }

  async notReady(): Promise<string | undefined> {
    try {
      return await pendingMigrations(this.pool);
    } catch (error) {
      return `database not ready: ${(error as Error).message}`;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.pool.end();
  }
}

/** A refused commit rolls its transaction back (the project row it may have created too). */
class Refusal extends Error {
  constructor(readonly outcome: CommitOutcome) {
    super(outcome.kind);
  }
}

/** The net effect of the changes, in order: the last change of a path wins. */
async function applyChanges(db: ClientBase, projectId: string, changes: Change[]): Promise<void> {
  const last = new Map(changes.map((change) => [change.path, change]));
  const puts = [...last.values()].flatMap((c) => (c.op === "put" ? [c] : []));
  const deletes = [...last.values()].flatMap((c) => (c.op === "delete" ? [c.path] : []));
  if (deletes.length > 0) {
    await db.query("DELETE FROM files WHERE project = $1 AND path = ANY($2)", [projectId, deletes]);
  }
  if (puts.length > 0) {
    await db.query(
      `INSERT INTO files (project, path, sha256, size)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[])
       ON CONFLICT (project, path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size`,
      [projectId, puts.map((c) => c.path), puts.map((c) => c.sha256), puts.map((c) => c.size)],
    );
  }
}
