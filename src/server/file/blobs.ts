// Content-addressed blobs on disk: DATA/blobs/ab/cdef..., written atomically, one file a blob
// (PUT /blobs/{sha256}); or many in one pack, DATA/blobs/packs/ (POST /blobs, packs.ts).

import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileBytes, fileSize, fsyncDir, isCode, writeAll } from "../fsutil.js";
import type { BlobPart, BodyFeed, StoredBytes } from "../store.js";
import { BlobPacks } from "./packs.js";

const TEMP_PREFIX = ".tmp-";

export class BlobFiles {
  private readonly packs: BlobPacks;

  constructor(private readonly dir: string) {
    this.packs = new BlobPacks(join(dir, "packs"));
  }

  /**
   * Makes the blobs directory and drops crash leftovers from the fan-out directories there are.
   * A fan-out directory is made with its first blob (`openTemp`): a server starts without 256
   * mkdirs (about 40 ms of CPU; most tests of the suite start a server).
   */
  async prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const fanOut = (await readdir(this.dir, { withFileTypes: true })).filter((entry) => entry.isDirectory());
    await Promise.all(
      fanOut.map(async ({ name }) => {
        const dir = join(this.dir, name);
        for (const file of await readdir(dir)) {
          if (file.startsWith(TEMP_PREFIX)) await rm(join(dir, file), { force: true });
        }
      }),
    );
    await fsyncDir(this.dir);
    await this.packs.prepare();
  }

  path(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256.slice(2));
  }

  async size(sha256: string): Promise<number | undefined> {
    return this.packs.size(sha256) ?? fileSize(this.path(sha256));
  }

  /** The blob's bytes, read when consumed, never held whole in memory. */
  async read(sha256: string): Promise<StoredBytes | undefined> {
    const packed = this.packs.read(sha256);
    if (packed) return packed;
    // Blobs are never deleted, so one that is there now is there when it is read.
    const size = await this.size(sha256);
    return size === undefined ? undefined : fileBytes(this.path(sha256), size);
  }

  /**
   * Temp file in the blob's directory, fsync, rename, fsync of the directory; nothing kept when the
   * feed fails. A blob stored already is only read from the feed, unless `always` (an upload to a
   * project that could not see it takes as long whoever holds it: its time tells nothing).
   */
  async write(sha256: string, feed: BodyFeed, always = false): Promise<"created" | "exists"> {
    if (!always && (await this.size(sha256)) !== undefined) {
      await feed(() => {}); // read (and checked by the feed) all the same
      return "exists";
    }

    const target = this.path(sha256);
    const temp = join(dirname(target), `${TEMP_PREFIX}${randomUUID()}`);
    const file = await this.openTemp(temp);
    let closed = false;
    let renamed = false;
    try {
      await feed((chunk) => writeAll(file, chunk));
      await file.sync();
      await file.close();
      closed = true;
      await rename(temp, target);
      renamed = true;
      await fsyncDir(dirname(target));
      return "created";
    } finally {
      if (!closed) await file.close().catch(() => {});
      if (!renamed) await rm(temp, { force: true });
    }
  }

  /** Stores `parts` in one pack, made durable once (an empty list writes nothing). */
  writePack(parts: readonly BlobPart[]): Promise<void> {
    return this.packs.write(parts);
  }

  /** The blob's temp file; its fan-out directory made first if this is its first blob, and made durable. */
  private async openTemp(temp: string): Promise<FileHandle> {
    try {
      return await open(temp, "wx");
    } catch (error) {
      if (!isCode(error, "ENOENT")) throw error;
      await mkdir(dirname(temp), { recursive: true }); // recursive: another first blob of it may have made it
      await fsyncDir(this.dir);
      return open(temp, "wx");
    }
  }
}
