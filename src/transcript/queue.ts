/**
 * A stretch of a byte stream, from offset `start` to `end`, held in memory as copies of the
 * chunks it came in. Pure: the transcript's memory buffer, tested with plain values.
 */
export class ByteQueue {
  private readonly chunks: Buffer[] = [];
  /** Bytes of chunks[0] before `start` (dropped, but still in the chunk). */
  private skip = 0;
  start: number;
  end: number;

  constructor(start = 0) {
    this.start = start;
    this.end = start;
  }

  /** Bytes held. */
  get size(): number {
    return this.end - this.start;
  }

  /** Appends a copy: the caller may reuse its buffer. */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(Buffer.from(chunk));
    this.end += chunk.length;
  }

  /** Up to `max` bytes from offset `from` (start <= from <= end). */
  read(from: number, max: number): Buffer {
    if (from < this.start || from > this.end) throw new RangeError(`offset ${from} is outside ${this.start}..${this.end}`);
    const pieces: Buffer[] = [];
    let skip = this.skip + (from - this.start);
    let wanted = Math.min(max, this.end - from);
    for (const chunk of this.chunks) {
      if (wanted === 0) break;
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      const piece = chunk.subarray(skip, skip + wanted);
      pieces.push(piece);
      wanted -= piece.length;
      skip = 0;
    }
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
  }

  /** Forgets the bytes before `offset` (no-op when they are gone already). */
  dropTo(offset: number): void {
    let drop = Math.min(offset, this.end) - this.start;
    if (drop <= 0) return;
    this.start += drop;
    drop += this.skip;
    while (this.chunks.length > 0 && drop >= this.chunks[0]!.length) drop -= this.chunks.shift()!.length;
    this.skip = drop;
  }
}
