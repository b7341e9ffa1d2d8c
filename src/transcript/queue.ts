/**
 * A stretch of a byte stream, from offset `start` to `end`, held in memory. Chunks are copied
 * into fixed-size blocks (the caller may reuse its buffer), so that holding 32 MiB of a stream
 * costs a few dozen allocations, not one per chunk. Pure: tested with plain values.
 */
export class ByteQueue {
  private readonly blocks: Buffer[] = [];
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
      if (filled === this.blocks.length * this.blockSize) this.blocks.push(Buffer.allocUnsafeSlow(this.blockSize));
      const used = filled - (this.blocks.length - 1) * this.blockSize;
      const piece = chunk.subarray(done, done + this.blockSize - used);
      this.blocks[this.blocks.length - 1]!.set(piece, used);
      done += piece.length;
      this.end += piece.length;
    }
  }

  /** Up to `max` bytes from offset `from` (start <= from <= end), as views of the blocks. */
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

  /** Up to `max` bytes from offset `from`, in one buffer. */
  read(from: number, max: number): Buffer {
    const pieces = this.pieces(from, max);
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  }

  /** Forgets the bytes before `offset` (no-op when they are gone already). */
  dropTo(offset: number): void {
    this.start = Math.max(this.start, Math.min(offset, this.end));
    while (this.blocks.length > 0 && this.start - this.blockBase >= this.blockSize) {
      this.blocks.shift();
      this.blockBase += this.blockSize;
    }
  }
}
