/**
 * Splits a byte stream into lines without copying: each line is a view into the chunk it came
 * in. A line that spans chunks is handed on in its pieces as they come (`linePart`) when the
 * sink can take them, so that nothing holds it whole; otherwise its pieces are copied and joined.
 * A pushed chunk is only read during `push`: its buffer may be read into again (stdin read in
 * place). Works on bytes, so a chunk boundary inside a multi-byte character cannot corrupt anything.
 */
export interface LineSplitterOptions {
  /** Longest line handed on, in bytes; longer lines are skipped (default 256 MiB). */
  maxLineLength?: number;
  /** Called once per skipped over-long line, with the number of bytes it had when dropped. */
  onOverflow?: (length: number) => void;
}

/** Where lines go. */
export interface LineSink {
  /** A whole line, without its "\n" (it may still end in "\r"); only valid during the call. */
  line(line: Buffer): void;
  /**
   * Optional: a whole line that lies in one chunk, as where it lies (`chunk[start, end)`), in
   * place of `line`. Making a view of a line costs more than reading its first bytes: a sink that
   * can tell from those that a line does not matter is spared it.
   */
  lineIn?(chunk: Buffer, start: number, end: number): void;
  /**
   * Optional: a line that spans chunks, piece by piece in order, `last` set on its final piece
   * (which may be empty). Without it, the pieces are joined and handed to `line`. Each piece is
   * only valid during the call, as a line is: a sink copies what it keeps.
   */
  linePart?(part: Buffer, last: boolean): void;
  /** With `linePart`: the line whose pieces came so far grew too long and is dropped. */
  lineDropped?(): void;
}

export const DEFAULT_MAX_LINE_LENGTH = 256 * 1024 * 1024;
const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

export class LineSplitter {
  private readonly parts: Buffer[] = [];
  private partLength = 0;
  /** True while skipping the rest of a line that grew past the maximum. */
  private overflowing = false;
  private readonly maxLineLength: number;
  private readonly onLine: (line: Buffer) => void;
  private readonly onLineIn: (chunk: Buffer, start: number, end: number) => void;
  /** The sink takes lines in pieces: nothing is held here. */
  private readonly sink: LineSink | undefined;
  /** A line is under way in pieces. */
  private streaming = false;

  constructor(
    sink: LineSink | ((line: Buffer) => void),
    private readonly options: LineSplitterOptions = {},
  ) {
    this.maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
    if (typeof sink === "function") this.onLine = sink;
    else {
      this.onLine = (line) => sink.line(line);
      if (typeof sink.linePart === "function") this.sink = sink;
    }
    this.onLineIn =
      typeof sink !== "function" && typeof sink.lineIn === "function"
        ? (chunk, start, end) => sink.lineIn!(chunk, start, end)
        : (chunk, start, end) => this.onLine(chunk.subarray(start, end));
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
    if (this.streaming) {
      if (!this.overflowing) this.sink!.linePart!(EMPTY, true);
    } else if (this.partLength > 0 && !this.overflowing) this.onLine(this.joinParts());
    this.reset();
  }

  private finishLine(chunk: Buffer, start: number, end: number): void {
    if (this.partLength === 0 && !this.overflowing && !this.streaming) {
      if (end - start <= this.maxLineLength) this.onLineIn(chunk, start, end);
      else this.options.onOverflow?.(end - start);
      return;
    }
    this.keep(chunk, start, end, true);
    if (!this.overflowing && !this.streaming) this.onLine(this.joinParts());
    this.reset();
  }

  /** Holds (or hands on) the unfinished part of a line, or drops it once the line is too long. */
  private keep(chunk: Buffer, start: number, end: number, last = false): void {
    if (this.overflowing) return;
    this.partLength += end - start;
    if (this.partLength > this.maxLineLength) {
      this.overflowing = true;
      this.options.onOverflow?.(this.partLength);
      this.parts.length = 0;
      if (this.streaming) this.sink!.lineDropped?.();
      return;
    }
    if (this.sink !== undefined) {
      this.streaming = true;
      this.sink.linePart!(chunk.subarray(start, end), last);
    } else {
      // A copy, but for the last piece: it is joined during this push.
      const piece = chunk.subarray(start, end);
      this.parts.push(last ? piece : Buffer.from(piece));
    }
  }

  private joinParts(): Buffer {
    return this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partLength);
  }

  private reset(): void {
    this.parts.length = 0;
    this.partLength = 0;
    this.overflowing = false;
    this.streaming = false;
  }
}
