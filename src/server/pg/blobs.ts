// Blobs in PostgreSQL: one row per blob in `blobs`, its bytes in 1 MiB `blob_chunks`. The blob row
// is written in the same transaction as its chunks, so a blob is there whole or not at all.

import { createHash } from "node:crypto";
import type { ClientBase, Pool } from "pg";
import { HashMismatchError, type BodyFeed } from "../store.js";
import { guarded, transaction } from "./db.js";

const CHUNK_BYTES = 1024 * 1024;

export async function blobSizes(pool: Pool | ClientBase, hashes: string[]): Promise<Map<string, number>> {
  const { rows } = await guarded(() =>
    pool.query<{ sha256: string; size: string }>("SELECT sha256, size FROM blobs WHERE sha256 = ANY($1)", [hashes]),
  );
  return new Map(rows.map((row) => [row.sha256, Number(row.size)]));
}

export async function readBlob(pool: Pool, sha256: string): Promise<Blob | undefined> {
  const { rows } = await guarded(() =>
    pool.query<{ data: Buffer | null }>(
      `SELECT c.data FROM blobs b LEFT JOIN blob_chunks c ON c.sha256 = b.sha256
       WHERE b.sha256 = $1 ORDER BY c.seq`,
      [sha256],
    ),
  );
  if (rows.length === 0) return undefined;
  return new Blob(rows.flatMap((row) => (row.data ? [row.data] : [])));
}

export async function writeBlob(pool: Pool, sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
  const hash = createHash("sha256");
  const chunks: Buffer[] = [];
  await feed((chunk) => {
    hash.update(chunk);
    chunks.push(chunk);
  });
  const actual = hash.digest("hex");
  if (actual !== sha256) throw new HashMismatchError(`body has SHA-256 ${actual}, not ${sha256}`);
  const data = Buffer.concat(chunks);

  return transaction(pool, async (client) => {
    // A concurrent insert of the same blob waits here for the other to commit, then sees it.
    const inserted = await client.query("INSERT INTO blobs (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      sha256,
      data.length,
    ]);
    if (inserted.rowCount === 0) return "exists";
    for (let seq = 0; seq * CHUNK_BYTES < data.length; seq++) {
      const part = data.subarray(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES);
      await client.query("INSERT INTO blob_chunks (sha256, seq, data) VALUES ($1, $2, $3)", [sha256, seq, part]);
    }
    return "created";
  });
}
