// Session transcripts in PostgreSQL: `transcripts` holds each one's length (locked per append),
// `transcript_chunks` the appended bytes by start offset.

import type { Pool } from "pg";
import type { AppendOutcome, SessionInfo, StoredBytes } from "../store.js";
import { planAppend } from "../transcript.js";
import { guarded, transaction } from "./db.js";

export function appendEvents(pool: Pool, project: string, session: string, offset: number, body: Buffer): Promise<AppendOutcome> {
  return transaction(pool, async (client) => {
    if (offset === 0) {
      await client.query("INSERT INTO transcripts (project, session, length) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING", [
        project,
        session,
      ]);
    }
    const { rows } = await client.query<{ length: string }>(
      "SELECT length FROM transcripts WHERE project = $1 AND session = $2 FOR UPDATE",
      [project, session],
    );
    if (rows.length === 0) return { kind: "offset_mismatch", length: 0 };
    const length = Number(rows[0]!.length);
    const overlapEnd = Math.min(length, offset + body.length);
    const chunks = await client.query<{ start: string; data: Buffer }>(
      `SELECT start, data FROM transcript_chunks
       WHERE project = $1 AND session = $2 AND start < $4 AND start + length(data) > $3 ORDER BY start`,
      [project, session, offset, overlapEnd],
    );
    const stored = Buffer.concat(chunks.rows.map((c) => c.data)).subarray(
      chunks.rows.length > 0 ? offset - Number(chunks.rows[0]!.start) : 0,
    );
    const plan = planAppend(length, offset, body, stored.subarray(0, Math.max(0, overlapEnd - offset)));
    if (plan.kind === "mismatch") return { kind: "offset_mismatch", length };
    if (plan.bytes.length > 0) {
      await client.query("INSERT INTO transcript_chunks (project, session, start, data) VALUES ($1, $2, $3, $4)", [
        project,
        session,
        length,
        plan.bytes,
      ]);
      await client.query("UPDATE transcripts SET length = $3, updated = now() WHERE project = $1 AND session = $2", [
        project,
        session,
        length + plan.bytes.length,
      ]);
    }
    return { kind: "appended", length: length + plan.bytes.length };
  });
}

/** The transcript as long as it is now, read one append (at most 8 MiB) at a time as it is consumed. */
export async function readEvents(pool: Pool, project: string, session: string): Promise<StoredBytes | undefined> {
  const { rows } = await guarded(() =>
    pool.query<{ length: string }>("SELECT length FROM transcripts WHERE project = $1 AND session = $2", [project, session]),
  );
  if (!rows[0]) return undefined;
  const size = Number(rows[0].length);
  return { size, chunks: (from = 0) => chunksOf(pool, project, session, size, from) };
}

/**
 * Each append is one chunk starting where the transcript ended, and chunks are never changed: the
 * first one read is the chunk holding byte `from`, cut to start there.
 */
async function* chunksOf(pool: Pool, project: string, session: string, size: number, from: number): AsyncGenerator<Buffer> {
  for (let start = from, first = true; start < size; first = false) {
    const { rows } = await guarded(() =>
      pool.query<{ start: string; data: Buffer }>(
        `SELECT start, data FROM transcript_chunks WHERE project = $1 AND session = $2 AND start ${first ? "<=" : "="} $3
         ORDER BY start DESC LIMIT 1`,
        [project, session, start],
      ),
    );
    if (!rows[0]) throw new Error(`transcript ${session} is cut short at byte ${start}`);
    const data = rows[0].data.subarray(start - Number(rows[0].start));
    yield data;
    start += data.length;
  }
}

export async function listSessions(pool: Pool, project: string): Promise<SessionInfo[]> {
  const { rows } = await guarded(() =>
    pool.query<{ id: string; length: string; updated: Date }>(
      `SELECT session AS id, length, updated FROM transcripts WHERE project = $1 ORDER BY session COLLATE "C"`,
      [project],
    ),
  );
  return rows.map((row) => ({ id: row.id, length: Number(row.length), updated: row.updated.toISOString() }));
}
