// Blobs in PostgreSQL: one row per blob in `blobs`, its bytes in 1 MiB `blob_chunks`. An upload
// streams into `blob_uploads` one chunk at a time (no connection held between chunks, so a slow
// client holds none); once its body is read and checked, one transaction moves the chunks under
// the blob and adds its row, so a blob is there whole or not at all. Reads fetch one chunk at a
// time as the answer is sent: a blob is never whole in memory, in or out.

import { randomUUID } from "node:crypto";
import type { ClientBase, Pool } from "pg";
import type { BlobPart, BodyFeed, StoredBytes } from "../store.js";
import { guarded, transaction } from "./db.js";

const CHUNK_BYTES = 1024 * 1024;
/** Chunk bytes gathered before one multi-row INSERT of a pack (hex-encoded on the wire: twice this). */
const INSERT_BYTES = 4 * 1024 * 1024;
/** Staged chunks older than this belong to an upload that died with its replica. */
const STALE_UPLOAD = "1 day";

/** The sizes of the blobs among `hashes` the project may see (`project_blobs`). */
export async function blobSizes(pool: Pool | ClientBase, project: string, hashes: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await guarded(() =>
    pool.query<{ sha256: string; size: string }>(
      "SELECT b.sha256, b.size FROM project_blobs v JOIN blobs b USING (sha256) WHERE v.project = $1 AND v.sha256 = ANY($2)",
      [project, hashes],
    ),
  );
  return new Map(rows.map((row) => [row.sha256, Number(row.size)]));
}

export async function readBlob(pool: Pool, project: string, sha256: string): Promise<StoredBytes | undefined> {
  const size = (await blobSizes(pool, project, [sha256])).get(sha256);
  return size === undefined ? undefined : { size, chunks: (from = 0) => chunksOf(pool, sha256, size, from) };
}

/**
 * Blobs are immutable, so chunks read by separate queries belong together; every chunk but the
 * last holds CHUNK_BYTES, so the one holding byte `from` is known without reading those before.
 */
async function* chunksOf(pool: Pool, sha256: string, size: number, from: number): AsyncGenerator<Buffer> {
  const firstSeq = Math.floor(from / CHUNK_BYTES);
  for (let seq = firstSeq, read = firstSeq * CHUNK_BYTES; read < size; seq++) {
    const { rows } = await guarded(() =>
      pool.query<{ data: Buffer }>("SELECT data FROM blob_chunks WHERE sha256 = $1 AND seq = $2", [sha256, seq]),
    );
    if (rows.length === 0) throw new Error(`blob ${sha256} is cut short: chunk ${seq} is missing`);
    const data = rows[0]!.data;
    yield seq === firstSeq ? data.subarray(from - read) : data;
    read += data.length;
  }
}

/** Stores the blob once for all projects and makes it visible to `project`: "exists" only when it was visible to it before. */
export async function writeBlob(pool: Pool, project: string, sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
  if ((await blobSizes(pool, project, [sha256])).has(sha256)) {
    await feed(() => {}); // read (and checked by the feed) all the same
    return "exists";
  }
  // Staged even when another project holds it: an upload takes as long whoever holds the blob.
  const upload = randomUUID();
  const rows = new ChunkRows(CHUNK_BYTES, (seq, data) =>
    guarded(() => pool.query("INSERT INTO blob_uploads (upload, seq, data) VALUES ($1, $2, $3)", [upload, seq, data])).then(() => {}),
  );
  let moved = false;
  try {
    await feed((chunk) => rows.push(chunk));
    await rows.end();
    const result = await transaction(pool, async (client) => {
      // A concurrent insert of the same blob waits here for the other to commit, then sees it.
      const inserted = await client.query("INSERT INTO blobs (sha256, size) VALUES ($1, $2) ON CONFLICT DO NOTHING", [sha256, rows.size]);
      if (inserted.rowCount !== 0) {
        await client.query("INSERT INTO blob_chunks (sha256, seq, data) SELECT $1, seq, data FROM blob_uploads WHERE upload = $2", [
          sha256,
          upload,
        ]);
      }
      await client.query("DELETE FROM blob_uploads WHERE upload = $1", [upload]);
      await client.query("INSERT INTO project_blobs (project, sha256) VALUES ($1, $2) ON CONFLICT DO NOTHING", [project, sha256]);
      return "created" as const;
    });
    moved = true;
    return result;
  } finally {
    // A failed or refused upload leaves nothing staged (dropStaleUploads catches what this misses).
    if (!moved) await pool.query("DELETE FROM blob_uploads WHERE upload = $1", [upload]).catch(() => {});
  }
}

/**
 * writeBlob of many blobs (POST /blobs: the body is spooled and checked already, so nothing is
 * staged): one transaction with a multi-row INSERT of the blobs, of their chunks and of the
 * project's rows, so one commit makes the pack durable. Rows are taken in hash order: two packs
 * with blobs in common wait for each other, never deadlock.
 */
export async function writeBlobs(pool: Pool, project: string, parts: readonly BlobPart[]): Promise<Array<"created" | "exists">> {
  const visible = await blobSizes(
    pool,
    project,
    parts.map((part) => part.sha256),
  );
  const seen = parts.map((part) => visible.has(part.sha256));
  for (const [i, part] of parts.entries()) if (seen[i]) await part.feed(() => {}); // read (and checked by the feed) all the same
  const fresh = [...new Map(parts.filter((_, i) => !seen[i]).map((part) => [part.sha256, part])).values()].sort((a, b) =>
    a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0,
  );
  if (fresh.length > 0) await transaction(pool, (client) => insertPack(client, project, fresh));
  return seen.map((was) => (was ? "exists" : "created"));
}

async function insertPack(client: ClientBase, project: string, parts: readonly BlobPart[]): Promise<void> {
  const hashes = parts.map((part) => part.sha256);
  // A concurrent insert of the same blob waits here for the other to commit, then sees it.
  const { rows } = await client.query<{ sha256: string }>(
    "INSERT INTO blobs (sha256, size) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT DO NOTHING RETURNING sha256",
    [hashes, parts.map((part) => part.size)],
  );
  const inserted = new Set(rows.map((row) => row.sha256));
  const chunks = new ChunkInserts(client);
  for (const part of parts) {
    // Read even when another project holds it: an upload takes as long whoever holds the blob.
    const keep = inserted.has(part.sha256);
    const cut = new ChunkRows(CHUNK_BYTES, (seq, data) => (keep ? chunks.add(part.sha256, seq, data) : Promise.resolve()));
    await part.feed((chunk) => cut.push(chunk));
    await cut.end();
    if (cut.size !== part.size) throw new Error(`blob ${part.sha256} gave ${cut.size} bytes, not ${part.size}`);
  }
  await chunks.flush();
  await client.query("INSERT INTO project_blobs (project, sha256) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING", [project, hashes]);
}

/** Chunk rows gathered into multi-row INSERTs of about INSERT_BYTES. */
class ChunkInserts {
  private rows: { sha256: string; seq: number; data: Buffer }[] = [];
  private bytes = 0;

  constructor(private readonly client: ClientBase) {}

  async add(sha256: string, seq: number, data: Buffer): Promise<void> {
    this.rows.push({ sha256, seq, data });
    this.bytes += data.length;
    if (this.bytes >= INSERT_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.rows.length === 0) return;
    const rows = this.rows;
    this.rows = [];
    this.bytes = 0;
    await this.client.query("INSERT INTO blob_chunks (sha256, seq, data) SELECT * FROM unnest($1::text[], $2::integer[], $3::bytea[])", [
      rows.map((row) => row.sha256),
      rows.map((row) => row.seq),
      rows.map((row) => row.data),
    ]);
  }
}

/** Drops the staged chunks of uploads that never finished (their replica died). */
export async function dropStaleUploads(pool: Pool): Promise<void> {
  await pool.query(`DELETE FROM blob_uploads WHERE at < now() - interval '${STALE_UPLOAD}'`);
}

/** A body cut into rows of `rowBytes` as it arrives, each handed to `store` once full: one row in memory at most. */
class ChunkRows {
  size = 0;
  private seq = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly rowBytes: number,
    private readonly store: (seq: number, data: Buffer) => Promise<void>,
  ) {}

  async push(chunk: Buffer): Promise<void> {
    this.size += chunk.length;
    while (chunk.length > 0) {
      const take = Math.min(chunk.length, this.rowBytes - this.pendingBytes);
      this.pending.push(chunk.subarray(0, take));
      this.pendingBytes += take;
      chunk = chunk.subarray(take);
      if (this.pendingBytes === this.rowBytes) await this.cut();
    }
  }

  async end(): Promise<void> {
    if (this.pendingBytes > 0) await this.cut();
  }

  private async cut(): Promise<void> {
    const data = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    await this.store(this.seq++, data);
  }
}
