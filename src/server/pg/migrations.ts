// Schema of the PostgreSQL store, applied in order under an advisory lock, so replicas that start
// together apply each migration once. Applied versions are recorded in schema_migrations.

import type { Pool } from "pg";

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
];

/** Any constant: the lock only has to be the same for every replica of one database. */
const LOCK_KEY = 0x75737061726b; // "uspark"

/** Applies the migrations not yet recorded; returns how many it applied. */
export async function migrate(pool: Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const { rows } = await client.query<{ done: number | null }>("SELECT max(version) AS done FROM schema_migrations");
      const done = rows[0]?.done ?? 0;
      for (let version = done + 1; version <= MIGRATIONS.length; version++) {
        await client.query("BEGIN");
        try {
          await client.query(MIGRATIONS[version - 1]!);
          await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {});
          throw error;
        }
      }
      return MIGRATIONS.length - done;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

/** Why the schema is not usable yet, or undefined when every migration is applied. */
export async function pendingMigrations(pool: Pool): Promise<string | undefined> {
  const { rows } = await pool.query<{ done: number | null }>(
    "SELECT (SELECT max(version) FROM schema_migrations) AS done",
  );
  const done = rows[0]?.done ?? 0;
  return done < MIGRATIONS.length ? `migrations pending (${done} of ${MIGRATIONS.length} applied)` : undefined;
}
