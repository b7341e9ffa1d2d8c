// Content-addressed blobs on disk: DATA/blobs/ab/cdef..., written atomically.

import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileBytes, fileSize, fsyncDir, writeAll } from "../fsutil.js";
import type { BodyFeed, StoredBytes } from "../store.js";

const TEMP_PREFIX = ".tmp-";

export class BlobFiles {
  constructor(private readonly dir: string) {}

  /**
   * Creates the 256 fan-out directories (so a new blob fsyncs only one) and drops crash leftovers
   * from the ones that were there: one mkdir each, not a recursive one (three system calls each).
   */
  async prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const fanOut = Array.from({ length: 256 }, (_, i) => join(this.dir, i.toString(16).padStart(2, "0")));
    await Promise.all(
      fanOut.map(async (dir) => {
        const made = await mkdir(dir).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === "EEXIST") return false;
            throw error;
          },
        );
        if (made) return;
        for (const name of await readdir(dir)) {
          if (name.startsWith(TEMP_PREFIX)) await rm(join(dir, name), { force: true });
        }
      }),
    );
    await fsyncDir(this.dir);
  }

  path(sha256: string): string {
    return join(this.dir, sha256.slice(0, 2), sha256.slice(2));
  }

  size(sha256: string): Promise<number | undefined> {
    return fileSize(this.path(sha256));
  }

  /** The blob's file, read when consumed, never held whole in memory. */
  async read(sha256: string): Promise<StoredBytes | undefined> {
    // Blobs are never deleted, so one that is there now is there when it is read.
    const size = await this.size(sha256);
    return size === undefined ? undefined : fileBytes(this.path(sha256), size);
  }

  /** Temp file in the blob's directory, fsync, rename, fsync of the directory; nothing kept when the feed fails. */
  async write(sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    if ((await this.size(sha256)) !== undefined) {
      await feed(() => {}); // read (and checked by the feed) all the same
      return "exists";
    }

    const target = this.path(sha256);
    const temp = join(dirname(target), `${TEMP_PREFIX}${randomUUID()}`);
    const file = await open(temp, "wx");
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
}
