/**
 * Splits a byte stream into lines without copying: each line is a view into the chunk it came
 * in, unless it spans chunks (then the parts are joined once). Works on bytes, so a chunk
 * boundary inside a multi-byte character cannot corrupt anything.
 */
export interface LineSplitterOptions {
  /** Longest line handed on, in bytes; longer lines are skipped (default 256 MiB). */
  maxLineLength?: number;
  /** Called once per skipped over-long line, with the number of bytes it had when dropped. */
  onOverflow?: (length: number) => void;
}

export const DEFAULT_MAX_LINE_LENGTH = 256 * 1024 * 1024;
const NEWLINE = 0x0a;

export class LineSplitter {
  private readonly parts: Buffer[] = [];
  private partLength = 0;
  /** True while skipping the rest of a line that grew past the maximum. */
  private overflowing = false;
  private readonly maxLineLength: number;

  constructor(
    private readonly onLine: (line: Buffer) => void,
    private readonly options: LineSplitterOptions = {},
  ) {
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  }

  push(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(NEWLINE);
    while (newline !== -1) {
      this.finishLine(chunk, start, newline);
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) this.keep(chunk, start, chunk.length);
  }

  /** End of input: a last line without a newline is still a line. */
  end(): void {
    if (this.partLength > 0 && !this.overflowing) this.onLine(this.joinParts());
    this.reset();
  }

  private finishLine(chunk: Buffer, start: number, end: number): void {
    if (this.partLength === 0 && !this.overflowing) {
      if (end - start <= this.maxLineLength) this.onLine(chunk.subarray(start, end));
      else this.options.onOverflow?.(end - start);
      return;
    }
    this.keep(chunk, start, end);
    if (!this.overflowing) this.onLine(this.joinParts());
    this.reset();
  }

  /** Holds the unfinished part of a line, or drops it once the line is too long. */
  private keep(chunk: Buffer, start: number, end: number): void {
    if (this.overflowing) return;
    this.partLength += end - start;
    if (this.partLength > this.maxLineLength) {
      this.overflowing = true;
      this.options.onOverflow?.(this.partLength);
      this.parts.length = 0;
      return;
    }
    this.parts.push(chunk.subarray(start, end));
  }

  private joinParts(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partLength);
  }

  private reset(): void {
    this.parts.length = 0;
    this.partLength = 0;
    this.overflowing = false;
  }
}
