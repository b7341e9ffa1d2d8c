import type { FileHandle } from "node:fs/promises";
import { BLOCK_BYTES, type ByteQueue } from "./queue.js";
import { openSpoolForAppend, SpoolReader, writeSpoolMeta, type SpoolMeta } from "./spool.js";
import { errorText } from "../errors/text.js";

/**
 * At most this much in one write to the spool: a block of the queue. Each block written is
 * dropped (and reused) at once, so a writer held by the spool goes on as soon as the queue is
 * back under its mark while the spool writes the rest; 8 MiB writes held it until all 8 were on disk.
 */
const WRITE_BYTES = BLOCK_BYTES;

/** What the spool tells the recorder as it writes. */
export interface SpoolListener {
  /** Bytes moved from the queue into the file (and dropped from the queue). */
  moved(): void;
  /** A write failed: the spool is broken. */
  failed(reason: string): void;
  /** Write no more (the spool broke, or the transcript was dropped). */
  stopped(): boolean;
}

/**
 * A live session's spool file: the stream's bytes from `base` on, moved out of the memory queue
 * one write at a time, and read back by the appends (`reader`).
 */
export class SpoolWriter {
  /** The stream offset up to which bytes are in the file. */
  written: number;
  private pumping: Promise<void> | undefined;

  private constructor(
    readonly base: number,
    readonly ready: Promise<{ handle: FileHandle; reader: SpoolReader }>,
    private readonly queue: ByteQueue,
    private readonly listener: SpoolListener,
  ) {
    this.written = base;
  }

  /** Starts the spool of `sessionId` from the queue's start (an empty file, then its meta as it is then). */
  static start(root: string, sessionId: string, meta: () => SpoolMeta, queue: ByteQueue, listener: SpoolListener): SpoolWriter {
    const base = queue.start;
    const ready = (async () => {
      const handle = await openSpoolForAppend(root, sessionId);
      await handle.truncate(0);
      await writeSpoolMeta(root, { ...meta(), base, pid: process.pid });
      const reader = (await SpoolReader.open(root, sessionId, base))!;
      return { handle, reader };
    })();
    const spool = new SpoolWriter(base, ready, queue, listener);
    spool.pump();
    return spool;
  }

  /** Moves what the queue holds into the file, unless a move is under way (it goes on to the end). */
  pump(): void {
    if (this.pumping || this.listener.stopped()) return;
    this.pumping = this.move().finally(() => (this.pumping = undefined));
  }

  /** Resolves once nothing is being moved. */
  async drained(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  async close(): Promise<void> {
    const opened = await this.ready.catch(() => undefined); // a failed open was reported already
    await opened?.handle.close();
    await opened?.reader.close();
  }

  private async move(): Promise<void> {
    try {
      const { handle, reader } = await this.ready;
      while (this.written < this.queue.end && !this.listener.stopped()) {
        const { bytesWritten } = await handle.writev(this.queue.pieces(this.written, WRITE_BYTES)); // a regular file: all of it, or an error
        this.written += bytesWritten;
        reader.end = this.written;
        this.queue.dropTo(this.written);
        this.listener.moved();
      }
    } catch (error) {
      this.listener.failed(`cannot write the spool: ${errorText(error)}`);
    }
  }
}
