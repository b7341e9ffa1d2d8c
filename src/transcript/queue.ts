/**
 * A stretch of a byte stream, from offset `start` to `end`, held in memory, copied into
 * fixed-size blocks: a pushed chunk may be a view of a buffer read into again (stdin read in
 * place), and holding 32 MiB of a trickle costs a few dozen allocations, not one per chunk.
 * Dropped blocks are reused: fresh ones cost page faults (about 3.6 ms a MiB here), a copy into
 * a block already used costs little. Pure: tested with plain values.
 */
/** The size of a block: what the queue allocates and reuses at a time, and what the spool writes at a time. */
export const BLOCK_BYTES = 1024 * 1024;
/** Dropped blocks kept for reuse: as many as the recorder's hard limit of unsent bytes (16 MiB). */
const MAX_SPARE_BLOCKS = 16;

interface Segment {
  bytes: Buffer;
  /** Bytes of `bytes` in use: a block fills up. */
  length: number;
}

export class ByteQueue {
  private readonly segments: Segment[] = [];
  /** Dropped blocks, for reuse: no view of them is held anywhere (`read` copies). */
  private readonly spare: Buffer[] = [];
  /** The stream offset of segments[0]'s first byte. */
  private segmentBase: number;
  start: number;
  end: number;

  constructor(
    start = 0,
    private readonly blockSize = BLOCK_BYTES,
  ) {
    this.start = start;
    this.end = start;
    this.segmentBase = start;
  }

  /** Bytes held. */
  get size(): number {
    return this.end - this.start;
  }

  /** Appends a copy of `chunk`. */
  push(chunk: Uint8Array): void {
    for (let done = 0; done < chunk.length;) {
      let last = this.segments.at(-1);
      if (last === undefined || last.length === this.blockSize) {
        last = { bytes: this.spare.pop() ?? Buffer.allocUnsafeSlow(this.blockSize), length: 0 };
        this.segments.push(last);
      }
      const piece = chunk.subarray(done, done + this.blockSize - last.length);
      last.bytes.set(piece, last.length);
      last.length += piece.length;
      done += piece.length;
      this.end += piece.length;
    }
  }

  /**
   * Up to `max` bytes from offset `from` (start <= from <= end), as views of the segments: valid
   * until the bytes are dropped (the blocks are then reused).
   */
  pieces(from: number, max: number): Buffer[] {
    if (from < this.start || from > this.end) throw new RangeError(`offset ${from} is outside ${this.start}..${this.end}`);
    const pieces: Buffer[] = [];
    const until = Math.min(this.end, from + max);
    let base = this.segmentBase;
    for (const segment of this.segments) {
      if (base >= until) break;
      const next = base + segment.length;
      if (next > from) pieces.push(segment.bytes.subarray(Math.max(from, base) - base, Math.min(until, next) - base));
      base = next;
    }
    return pieces;
  }

  /**
   * Up to `max` bytes from offset `from`, copied (still valid after a drop): into `into` when
   * given (the caller's reused buffer: a fresh one costs page faults per byte), else a new one.
   */
  read(from: number, max: number, into?: Buffer): Buffer {
    const pieces = this.pieces(from, into === undefined ? max : Math.min(max, into.length));
    const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
    const target = into ?? Buffer.allocUnsafe(length);
    let at = 0;
    for (const piece of pieces) at += piece.copy(target, at);
    return target.subarray(0, length);
  }

  /** Forgets the bytes before `offset` (no-op when they are gone already). */
  dropTo(offset: number): void {
    this.start = Math.max(this.start, Math.min(offset, this.end));
    while (this.segments.length > 0 && this.start - this.segmentBase >= this.segments[0]!.length) {
      const first = this.segments.shift()!;
      if (this.spare.length < MAX_SPARE_BLOCKS) this.spare.push(first.bytes);
      this.segmentBase += first.length;
    }
  }
}
