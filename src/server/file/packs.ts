// Blobs uploaded together (POST /blobs) are kept in one pack file, DATA/blobs/packs/<id>.pack:
// their bytes one after another, then the index (JSON: [[sha256, offset, size], ...]) and the
// index's length in bytes (8 bytes, big-endian). A pack is written under a temp name, fsynced,
// renamed and its directory fsynced: it is whole under its name or not there at all, and a pack
// of a thousand blobs costs two fsyncs where a thousand loose files cost two thousand.

import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileBytesAt, fsyncDir, isCode, writeAll } from "../fsutil.js";
import type { BlobPart, StoredBytes } from "../store.js";

const TEMP_PREFIX = ".tmp-";
const SUFFIX = ".pack";
const TRAILER_BYTES = 8;
/** Bytes gathered before a write: a pack of small blobs is a few writes, not one a blob. */
const WRITE_BYTES = 1024 * 1024;

interface Place {
  pack: string;
  offset: number;
  size: number;
}

export class BlobPacks {
  private readonly places = new Map<string, Place>();
  private made = false;

  constructor(private readonly dir: string) {}

  /** Drops temp files a crash left, and learns where every packed blob lies. The directory is made with the first pack. */
  async prepare(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (isCode(error, "ENOENT")) return;
      throw error;
    }
    this.made = true;
    for (const name of names) {
      if (name.startsWith(TEMP_PREFIX)) await rm(join(this.dir, name), { force: true });
      else if (name.endsWith(SUFFIX)) this.learn(join(this.dir, name), await readPackIndex(join(this.dir, name)));
    }
  }

  size(sha256: string): number | undefined {
    return this.places.get(sha256)?.size;
  }

  read(sha256: string): StoredBytes | undefined {
    const place = this.places.get(sha256);
    return place && fileBytesAt(place.pack, place.offset, place.size);
  }

  /** Writes `parts` into a new pack, durably; nothing is kept when a feed fails or gives another size. */
  async write(parts: readonly BlobPart[]): Promise<void> {
    if (parts.length === 0) return;
    await this.makeDir();
    const temp = join(this.dir, `${TEMP_PREFIX}${randomUUID()}`);
    const target = join(this.dir, `${randomUUID()}${SUFFIX}`);
    const file = await open(temp, "wx");
    let renamed = false;
    try {
      const index = await writeParts(file, parts);
      const json = Buffer.from(JSON.stringify(index));
      const trailer = Buffer.alloc(TRAILER_BYTES);
      trailer.writeBigUInt64BE(BigInt(json.length));
      await writeAll(file, Buffer.concat([json, trailer]));
      await file.sync();
      await file.close();
      await rename(temp, target);
      renamed = true;
      await fsyncDir(this.dir);
      this.learn(target, index);
    } finally {
      if (!renamed) {
        await file.close().catch(() => {});
        await rm(temp, { force: true });
      }
    }
  }

  private async makeDir(): Promise<void> {
    if (this.made) return;
    await mkdir(this.dir, { recursive: true });
    await fsyncDir(dirname(this.dir));
    this.made = true;
  }

  private learn(pack: string, index: Array<[string, number, number]>): void {
    for (const [sha256, offset, size] of index) this.places.set(sha256, { pack, offset, size });
  }
}

/** The parts' bytes one after another; their index. */
async function writeParts(file: FileHandle, parts: readonly BlobPart[]): Promise<Array<[string, number, number]>> {
  const index: Array<[string, number, number]> = [];
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    await writeAll(file, Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  for (const { sha256, size, feed } of parts) {
    let given = 0;
    // The feed hands a fresh buffer each time (BodyFeed): kept until the flush.
    await feed(async (chunk) => {
      pending.push(chunk);
      pendingBytes += chunk.length;
      given += chunk.length;
      if (pendingBytes >= WRITE_BYTES) await flush();
    });
    if (given !== size) throw new Error(`blob ${sha256} gave ${given} bytes, not ${size}`);
    index.push([sha256, offset, size]);
    offset += size;
  }
  if (pendingBytes > 0) await flush();
  return index;
}

/** A pack's index, read from its end. */
export async function readPackIndex(pack: string): Promise<Array<[string, number, number]>> {
  const file = await open(pack, "r");
  try {
    const { size } = await file.stat();
    const trailer = Buffer.alloc(TRAILER_BYTES);
    await file.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    const length = Number(trailer.readBigUInt64BE());
    const json = Buffer.alloc(length);
    await file.read(json, 0, length, size - TRAILER_BYTES - length);
    return JSON.parse(json.toString("utf8")) as Array<[string, number, number]>;
  } finally {
    await file.close();
  }
}

/** The hashes of every packed blob under `dir` (tests: what the store holds). */
export async function packedHashes(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const lists = await Promise.all(names.filter((name) => name.endsWith(SUFFIX)).map((name) => readPackIndex(join(dir, name))));
  return lists.flat().map(([sha256]) => sha256);
}
