// The parts of one POST /blobs, kept on disk until every one is checked: the request stores all
// of them or none, and memory holds no part whole.

import { randomUUID } from "node:crypto";
import { open, rm, type FileHandle } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** Where a part lies in the spool. */
export interface SpooledPart {
  offset: number;
  size: number;
}

/** What a store is fed at a time when it reads a part back (a fresh buffer each: a store may keep it). */
const READ_BYTES = 1024 * 1024;

export class BlobSpool {
  private size = 0;

  private constructor(
    private readonly file: FileHandle,
    /** Its name while it has one (where an open file cannot be unlinked). */
    private readonly filePath: string | undefined,
  ) {}

  /**
   * A new spool in the system's temp directory, unlinked at once where the system allows it (its
   * descriptor keeps it): a server killed mid-request leaves nothing behind. `close` ends it.
   */
  static async open(): Promise<BlobSpool> {
    const filePath = path.join(os.tmpdir(), `uspark-blobs-${randomUUID()}`);
    const file = await open(filePath, "wx+", 0o600);
    const unlinked = await rm(filePath).then(
      () => true,
      () => false,
    );
    return new BlobSpool(file, unlinked ? undefined : filePath);
  }

  /** Where the next bytes appended will lie. */
  get end(): number {
    return this.size;
  }

  async append(bytes: Buffer): Promise<void> {
    for (let written = 0; written < bytes.length;) {
      const { bytesWritten } = await this.file.write(bytes, written, bytes.length - written, this.size + written);
      written += bytesWritten;
    }
    this.size += bytes.length;
  }

  /** Feeds a part back, a piece at a time. */
  async feed(part: SpooledPart, write: (chunk: Buffer) => void | Promise<void>): Promise<void> {
    for (let done = 0; done < part.size;) {
      const chunk = Buffer.allocUnsafe(Math.min(READ_BYTES, part.size - done));
      const { bytesRead } = await this.file.read(chunk, 0, chunk.length, part.offset + done);
      if (bytesRead === 0) throw new Error("the upload spool ended early");
      await write(chunk.subarray(0, bytesRead));
      done += bytesRead;
    }
  }

  async close(): Promise<void> {
    await this.file.close().catch(() => {});
    if (this.filePath !== undefined) await rm(this.filePath, { force: true });
  }
}
