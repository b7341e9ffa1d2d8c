/**
 * A stretch of a byte stream, from offset `start` to `end`, held in memory. Chunks are copied
 * into fixed-size blocks (the caller may reuse its buffer), so that holding 32 MiB of a stream
 * costs a few dozen allocations, not one per chunk; dropped blocks are reused, so that a long
 * session costs none after its first few (fresh blocks cost page faults and garbage collections,
 * the bulk of the transcript's time). Pure: tested with plain values.
 */
/** Dropped blocks kept for reuse: as many as the memory limit's worth of unsent bytes (32 MiB). */
const MAX_SPARE_BLOCKS = 32;

export class ByteQueue {
  private readonly blocks: Buffer[] = [];
  /** Dropped blocks, for reuse: no view of them is held anywhere (`read` copies). */
  private readonly spare: Buffer[] = [];
  /** The stream offset of blocks[0]'s first byte. */
  private blockBase: number;
  start: number;
  end: number;

  constructor(
    start = 0,
    private readonly blockSize = 1024 * 1024,
  ) {
    this.start = start;
    this.end = start;
    this.blockBase = start;
  }

  /** Bytes held. */
  get size(): number {
    return this.end - this.start;
  }

  push(chunk: Uint8Array): void {
    for (let done = 0; done < chunk.length; ) {
      const filled = this.end - this.blockBase;
      if (filled === this.blocks.length * this.blockSize) this.blocks.push(this.spare.pop() ?? Buffer.allocUnsafeSlow(this.blockSize));
      const used = filled - (this.blocks.length - 1) * this.blockSize;
      const piece = chunk.subarray(done, done + this.blockSize - used);
      this.blocks[this.blocks.length - 1]!.set(piece, used);
      done += piece.length;
      this.end += piece.length;
    }
  }

  /**
   * Up to `max` bytes from offset `from` (start <= from <= end), as views of the blocks: valid
   * until the bytes are dropped (the blocks are then reused).
   */
  pieces(from: number, max: number): Buffer[] {
    if (from < this.start || from > this.end) throw new RangeError(`offset ${from} is outside ${this.start}..${this.end}`);
    const pieces: Buffer[] = [];
    const until = Math.min(this.end, from + max);
    for (let at = from; at < until; ) {
      const index = Math.floor((at - this.blockBase) / this.blockSize);
      const offset = (at - this.blockBase) % this.blockSize;
      const piece = this.blocks[index]!.subarray(offset, offset + Math.min(this.blockSize - offset, until - at));
      pieces.push(piece);
      at += piece.length;
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
    while (this.blocks.length > 0 && this.start - this.blockBase >= this.blockSize) {
      if (this.spare.length < MAX_SPARE_BLOCKS) this.spare.push(this.blocks.shift()!);
      else this.blocks.shift();
      this.blockBase += this.blockSize;
    }
  }
}
