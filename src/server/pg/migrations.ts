// Schema of the PostgreSQL store, applied in order under an advisory lock, so replicas that start
// together apply each migration once. Applied versions are recorded in schema_migrations.

import type { Pool } from "pg";
import { fillChains } from "./chains.js";
import { inTransaction, withClient } from "./db.js";

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE projects (id text PRIMARY KEY, version bigint NOT NULL DEFAULT 0);
  CREATE TABLE blobs (sha256 text PRIMARY KEY, size bigint NOT NULL);
  CREATE TABLE blob_chunks (
    sha256 text NOT NULL REFERENCES blobs ON DELETE CASCADE,
    seq integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (sha256, seq)
  );
  CREATE TABLE files (
    project text NOT NULL REFERENCES projects,
    path text NOT NULL,
    sha256 text NOT NULL REFERENCES blobs,
    size bigint NOT NULL,
    PRIMARY KEY (project, path)
  );
  CREATE TABLE commits (
    project text NOT NULL REFERENCES projects,
    version bigint NOT NULL,
    key text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    changes jsonb NOT NULL,
    source jsonb,
    PRIMARY KEY (project, version),
    UNIQUE (project, key)
  );
  CREATE TABLE transcripts (
    project text NOT NULL,
    session text NOT NULL,
    length bigint NOT NULL,
    PRIMARY KEY (project, session)
  );
  CREATE TABLE transcript_chunks (
    project text NOT NULL,
    session text NOT NULL,
    start bigint NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (project, session, start),
    FOREIGN KEY (project, session) REFERENCES transcripts
  );
  `,
  // v1.2: projects are created explicitly (those that only had transcripts get a row too) and
  // keep their creation time; every path's history replaces the files table (the history is
  // rebuilt from the commits, the current files are its open rows); blob uploads are staged in
  // chunks as they stream in.
  `
  ALTER TABLE projects ADD COLUMN created timestamptz NOT NULL DEFAULT now();
  UPDATE projects p SET created = c.first FROM (SELECT project, min(at) AS first FROM commits GROUP BY project) c
    WHERE c.project = p.id;
  INSERT INTO projects (id) SELECT DISTINCT project FROM transcripts ON CONFLICT DO NOTHING;
  CREATE TABLE file_history (
    project text NOT NULL REFERENCES projects,
    path text NOT NULL,
    from_version bigint NOT NULL,
    until_version bigint,
    sha256 text NOT NULL REFERENCES blobs,
    size bigint NOT NULL,
    PRIMARY KEY (project, path, from_version)
  );
  CREATE UNIQUE INDEX file_history_current ON file_history (project, path) WHERE until_version IS NULL;
  INSERT INTO file_history (project, path, from_version, until_version, sha256, size)
  SELECT project, path, version, next_version, sha256, size FROM (
    SELECT *, lead(version) OVER (PARTITION BY project, path ORDER BY version) AS next_version FROM (
      SELECT DISTINCT ON (c.project, e.change->>'path', c.version)
             c.project, e.change->>'path' AS path, c.version, e.change->>'op' AS op,
             e.change->>'sha256' AS sha256, (e.change->>'size')::bigint AS size
      FROM commits c CROSS JOIN LATERAL jsonb_array_elements(c.changes) WITH ORDINALITY AS e(change, n)
      ORDER BY c.project, e.change->>'path', c.version, e.n DESC
    ) last_change_of_each_commit
  ) spans WHERE op = 'put';
  DROP TABLE files;
  CREATE TABLE blob_uploads (
    upload uuid NOT NULL,
    seq integer NOT NULL,
    data bytea NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (upload, seq)
  );
  `,
  // v0.3: scoped tokens (only the SHA-256 of a secret is kept) and device logins waiting for a
  // person's approval, where every replica sees them.
  `
  CREATE TABLE tokens (
    id text PRIMARY KEY,
    sha256 text NOT NULL UNIQUE,
    projects text[] NOT NULL,
    access text NOT NULL CHECK (access IN ('read', 'write')),
    created timestamptz NOT NULL,
    expires timestamptz,
    revoked timestamptz
  );
  CREATE TABLE device_logins (
    device_hash text PRIMARY KEY,
    user_hash text NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    login jsonb NOT NULL
  );
  `,
  // v0.3: when each transcript was last appended to, so that the web view lists the running
  // session first (older transcripts take the time of this migration).
  `
  ALTER TABLE transcripts ADD COLUMN updated timestamptz NOT NULL DEFAULT now();
  `,
  // v0.4 (docs/api.md, "Access"): a blob is visible to a project once uploaded to it or named by
  // one of its commits (every put of file_history, so older data keeps working); a token made by
  // a device login names the token that approved it, and dies with it.
  `
  CREATE TABLE project_blobs (
    project text NOT NULL REFERENCES projects,
    sha256 text NOT NULL REFERENCES blobs,
    PRIMARY KEY (project, sha256)
  );
  INSERT INTO project_blobs (project, sha256) SELECT DISTINCT project, sha256 FROM file_history;
  ALTER TABLE tokens ADD COLUMN parent_id text, ADD COLUMN parent_sha256 text;
  `,
  // v1.3 (migration 6): each commit's chain hash (src/api/chain.ts), computed for the commits already there
  // right after (fillChains: the hash is SHA-256 over canonical JSON, done in JavaScript); an index
  // that finds the files under a directory (a commit's file/directory clashes).
  `
  ALTER TABLE commits ADD COLUMN chain text;
  CREATE INDEX file_history_current_prefix ON file_history (project, path text_pattern_ops) WHERE until_version IS NULL;
  `,
];

/** Any constant: the lock only has to be the same for every replica of one database. */
const LOCK_KEY = 0x75737061726b; // "uspark"

/** Applies the migrations not yet recorded; returns how many it applied. */
export function migrate(pool: Pool): Promise<number> {
  return withClient(pool, async (client) => {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const { rows } = await client.query<{ done: number | null }>("SELECT max(version) AS done FROM schema_migrations");
      const done = rows[0]?.done ?? 0;
      for (let version = done + 1; version <= MIGRATIONS.length; version++) {
        await inTransaction(client, async () => {
          await client.query(MIGRATIONS[version - 1]!);
          await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]);
        });
      }
      // Commits written before the chain column, or meanwhile by a replica of an older release.
      await fillChains(client);
      return MIGRATIONS.length - done;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    }
  });
}

/** Why the schema is not usable yet, or undefined when every migration is applied. */
export async function pendingMigrations(pool: Pool): Promise<string | undefined> {
  const { rows } = await pool.query<{ done: number | null }>("SELECT (SELECT max(version) FROM schema_migrations) AS done");
  const done = rows[0]?.done ?? 0;
  return done < MIGRATIONS.length ? `migrations pending (${done} of ${MIGRATIONS.length} applied)` : undefined;
}
