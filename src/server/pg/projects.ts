// Projects, their files now and as of a version, and their commits, in PostgreSQL. A path's
// history is one `file_history` row per put: from the version that put it until the version that
// changed or deleted it (NULL while it is current).

import type { ClientBase, Pool } from "pg";
import type { Change, CommitFeed, CommitRecord, CommitSource, ProjectSummary } from "../../api/types.js";
import { ProjectNotFoundError, type FeedQuery, type FileEntry } from "../store.js";
import { listAdd } from "../commit-check.js";
import { chainAt } from "./chains.js";
import { guarded } from "./db.js";

type Db = Pool | ClientBase;

export async function listProjects(db: Db): Promise<ProjectSummary[]> {
  const { rows } = await guarded(() =>
    db.query<{ id: string; version: string; files: string; updated: Date }>(
      `SELECT p.id, p.version,
              (SELECT count(*) FROM file_history f WHERE f.project = p.id AND f.until_version IS NULL) AS files,
              coalesce((SELECT at FROM commits c WHERE c.project = p.id ORDER BY version DESC LIMIT 1), p.created) AS updated
       FROM projects p ORDER BY p.id COLLATE "C"`,
    ),
  );
  return rows.map((row) => ({ id: row.id, version: Number(row.version), files: Number(row.files), updated: row.updated.toISOString() }));
}

/** Undefined when the project exists already. */
export async function createProject(db: Db, projectId: string): Promise<ProjectSummary | undefined> {
  const { rows } = await guarded(() =>
    db.query<{ created: Date }>("INSERT INTO projects (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING created", [projectId]),
  );
  return rows[0] ? { id: projectId, version: 0, files: 0, updated: rows[0].created.toISOString() } : undefined;
}

/** The project's version; throws ProjectNotFoundError when there is no such project. */
export async function headOf(db: Db, projectId: string): Promise<number> {
  const { rows } = await guarded(() => db.query<{ version: string }>("SELECT version FROM projects WHERE id = $1", [projectId]));
  if (!rows[0]) throw new ProjectNotFoundError(projectId);
  return Number(rows[0].version);
}

/** The heads of those of `projectIds` that exist. */
export async function headsOf(db: Db, projectIds: string[]): Promise<{ id: string; version: number }[]> {
  const { rows } = await guarded(() =>
    db.query<{ id: string; version: string }>("SELECT id, version FROM projects WHERE id = ANY($1)", [projectIds]),
  );
  return rows.map((row) => ({ id: row.id, version: Number(row.version) }));
}

/** The current files and version, from one snapshot. */
export async function currentListing(db: Db, projectId: string): Promise<{ version: number; files: FileEntry[] }> {
  const { rows } = await guarded(() =>
    db.query<{ version: string; path: string | null; sha256: string; size: string }>(
      `SELECT p.version, f.path, f.sha256, f.size FROM projects p
       LEFT JOIN file_history f ON f.project = p.id AND f.until_version IS NULL
       WHERE p.id = $1 ORDER BY f.path COLLATE "C"`,
      [projectId],
    ),
  );
  if (!rows[0]) throw new ProjectNotFoundError(projectId);
  const files = rows.flatMap((r) => (r.path === null ? [] : [{ path: r.path, sha256: r.sha256, size: Number(r.size) }]));
  return { version: Number(rows[0].version), files };
}

/** The files as of `version` (at most the head: later commits only close rows after it). */
export async function filesAt(db: Db, projectId: string, version: number): Promise<FileEntry[]> {
  const { rows } = await guarded(() =>
    db.query<{ path: string; sha256: string; size: string }>(
      `SELECT path, sha256, size FROM file_history
       WHERE project = $1 AND from_version <= $2 AND (until_version IS NULL OR until_version > $2)
       ORDER BY path COLLATE "C"`,
      [projectId, version],
    ),
  );
  return rows.map((r) => ({ path: r.path, sha256: r.sha256, size: Number(r.size) }));
}

/** What the expected paths hold now (absent paths are not in the map). */
export async function currentFiles(db: Db, projectId: string, paths: string[]): Promise<Map<string, { sha256: string; size: number }>> {
  if (paths.length === 0) return new Map();
  const { rows } = await db.query<{ path: string; sha256: string; size: string }>(
    "SELECT path, sha256, size FROM file_history WHERE project = $1 AND path = ANY($2) AND until_version IS NULL",
    [projectId, paths],
  );
  return new Map(rows.map((r) => [r.path, { sha256: r.sha256, size: Number(r.size) }]));
}

/** Rows of file_history changed since its last ANALYZE that make its statistics stale (with a tenth of its rows). */
const STALE_ROWS = 500;

/**
 * Analyzes file_history when many rows changed since it last was. Without statistics (a fresh
 * table, or one a first push of 50,000 files just grew, before autovacuum comes by) the planner
 * reads filesUnderDirs' range with the unique index, filtering every current file of the project
 * once per path: 12 s a 1000-path commit at 20,000 files, where the prefix index takes 2 ms.
 */
export async function refreshStatistics(db: Db): Promise<void> {
  const { rows } = await guarded(() =>
    db.query<{ changed: string; live: string }>(
      "SELECT n_mod_since_analyze AS changed, n_live_tup AS live FROM pg_stat_user_tables WHERE relid = 'file_history'::regclass",
    ),
  );
  const stats = rows[0];
  if (stats && Number(stats.changed) > STALE_ROWS + Number(stats.live) / 10) await guarded(() => db.query("ANALYZE file_history"));
}

/**
 * Current files under each of `dirs`, at most `limit` per directory (checkCommit's `under`: the
 * commit's deletes there and one more). Bytewise ranges, so the pattern index finds them.
 */
export async function filesUnderDirs(db: Db, projectId: string, dirs: string[], limit: number): Promise<Map<string, string[]>> {
  if (dirs.length === 0) return new Map();
  const { rows } = await db.query<{ dir: string; path: string }>(
    `SELECT d.dir, f.path FROM unnest($2::text[]) AS d(dir)
     CROSS JOIN LATERAL (SELECT path FROM file_history
       WHERE project = $1 AND until_version IS NULL AND path ~>=~ (d.dir || '/') AND path ~<~ (d.dir || '0') LIMIT $3) f`,
    [projectId, dirs, limit],
  );
  const under = new Map<string, string[]>();
  for (const { dir, path } of rows) listAdd(under, dir, path);
  return under;
}

/** The net effect of the changes of commit `version`, in order: the last change of a path wins. */
export async function applyChanges(db: ClientBase, projectId: string, version: number, changes: readonly Change[]): Promise<void> {
  const last = new Map(changes.map((change) => [change.path, change]));
  const puts = [...last.values()].flatMap((c) => (c.op === "put" ? [c] : []));
  await db.query("UPDATE file_history SET until_version = $2 WHERE project = $1 AND path = ANY($3) AND until_version IS NULL", [
    projectId,
    version,
    [...last.keys()],
  ]);
  if (puts.length > 0) {
    await db.query(
      `INSERT INTO file_history (project, path, from_version, sha256, size)
       SELECT $1, path, $2, sha256, size FROM unnest($3::text[], $4::text[], $5::bigint[]) AS p(path, sha256, size)`,
      [projectId, version, puts.map((c) => c.path), puts.map((c) => c.sha256), puts.map((c) => c.size)],
    );
  }
}

/**
 * The commits of GET /commits (see FeedQuery), up to the head read first, so that the head
 * answered covers every commit answered. Their size is counted as PostgreSQL prints the changes.
 */
export async function commitFeed(db: Db, projectId: string, query: FeedQuery): Promise<CommitFeed> {
  const head = await headOf(db, projectId);
  const chain = await chainAt(db, projectId, head); // fills in any chain missing up to the head
  const { rows } = await guarded(() =>
    db.query<CommitRow>(
      `SELECT version, at, changes, source, chain FROM (
         SELECT *, sum(octet_length(changes::text)) OVER (ORDER BY version) - octet_length(changes::text) AS before
         FROM (SELECT version, at, changes, source, chain FROM commits
               WHERE project = $1 AND version > $2 AND version <= $3
                 AND ($4::text IS NULL OR EXISTS (
                   SELECT 1 FROM jsonb_array_elements(changes) c WHERE c->>'path' = $4 OR starts_with(c->>'path', $4 || '/')))
               ORDER BY version LIMIT $5) page
       ) sized
       WHERE before = 0 OR before + octet_length(changes::text) <= $6 ORDER BY version`,
      [projectId, query.since, head, query.path ?? null, query.limit, query.maxBytes],
    ),
  );
  return { version: head, commits: rows.map(recordOf), chain };
}

type CommitRow = { version: string; at: Date; changes: Change[]; source: CommitSource | null; chain: string };

function recordOf(row: CommitRow): CommitRecord {
  return {
    version: Number(row.version),
    time: row.at.toISOString(),
    ...(row.source ? { source: row.source } : {}),
    changes: row.changes,
    chain: row.chain,
  };
}
