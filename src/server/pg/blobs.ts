// Blobs in PostgreSQL: one row per blob in `blobs`, its bytes in 1 MiB `blob_chunks`. The blob row
// is written in the same transaction as its chunks, so a blob is there whole or not at all.

import type { ClientBase, Pool } from "pg";
import type { BodyFeed } from "../store.js";
import { guarded, transaction } from "./db.js";

const CHUNK_BYTES = 1024 * 1024;

export async function blobSizes(pool: Pool | ClientBase, hashes: readonly string[]): Promise<Map<string, number>> {
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

/** The whole body is read before the transaction: a slow client never holds a connection. */
export async function writeBlob(pool: Pool, sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
  const rows = new ChunkRows(CHUNK_BYTES);
  await feed((chunk) => rows.push(chunk));
  const parts = rows.end();

  return transaction(pool, async (client) => {
    // A concurrent insert of the same blob waits here for the other to commit, then sees it.
    const inserted = await client.query("INSERT INTO blobs (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      sha256,
      rows.size,
    ]);
    if (inserted.rowCount === 0) return "exists";
    for (const [seq, part] of parts.entries()) {
      await client.query("INSERT INTO blob_chunks (sha256, seq, data) VALUES ($1, $2, $3)", [sha256, seq, part]);
    }
    return "created";
  });
}

/** A body cut into rows of `rowBytes` as it arrives, never held twice. */
class ChunkRows {
  size = 0;
  private readonly rows: Buffer[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly rowBytes: number) {}

  push(chunk: Buffer): void {
    this.size += chunk.length;
    while (chunk.length > 0) {
      const take = Math.min(chunk.length, this.rowBytes - this.pendingBytes);
      this.pending.push(chunk.subarray(0, take));
      this.pendingBytes += take;
      chunk = chunk.subarray(take);
      if (this.pendingBytes === this.rowBytes) this.cut();
    }
  }

  end(): Buffer[] {
    if (this.pendingBytes > 0) this.cut();
    return this.rows;
  }

  private cut(): void {
    this.rows.push(Buffer.concat(this.pending, this.pendingBytes));
    this.pending = [];
    this.pendingBytes = 0;
  }
}
