/**
 * A JSON reader for agent events that does not materialise what the watcher never needs.
 * Strings longer than a limit (file contents, tool output) are skipped with native `indexOf`
 * and stand as a `SkippedString`; everything else reads as `JSON.parse` would read it.
 * Invalid JSON yields `undefined`: a stream line is never a reason to throw.
 */
export class SkippedString {
  constructor(readonly byteLength: number) {}
}

export const DEFAULT_MAX_STRING_BYTES = 16 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const INVALID = Symbol("invalid JSON");

export function parseSparse(buf: Buffer, maxStringBytes = DEFAULT_MAX_STRING_BYTES): unknown {
  const reader = new SparseReader(buf, maxStringBytes);
  try {
    const value = reader.value();
    reader.skipSpace();
    return reader.atEnd() ? value : undefined;
  } catch {
    // INVALID, or a RangeError from absurd nesting: either way, not an event we can use.
    return undefined;
  }
}

/** Only the leading object of a line counts as an event; arrays and scalars are ignored. */
export function parseEvent(buf: Buffer, maxStringBytes?: number): Record<string, unknown> | undefined {
  const value = parseSparse(buf, maxStringBytes);
  return isObject(value) ? value : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class SparseReader {
  private pos = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly maxStringBytes: number,
  ) {}

  atEnd(): boolean {
    return this.pos === this.buf.length;
  }

  skipSpace(): void {
    const buf = this.buf;
    let pos = this.pos;
    while (pos < buf.length) {
      const c = buf[pos]!;
      // space, \t, \n, \r (a CRLF line keeps its \r)
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      pos++;
    }
    this.pos = pos;
  }

  value(): unknown {
    this.skipSpace();
    const c = this.buf[this.pos];
    switch (c) {
      case 0x7b: // {
        return this.object();
      case 0x5b: // [
        return this.array();
      case QUOTE:
        return this.string();
      case 0x74: // t
        return this.literal("true", true);
      case 0x66: // f
        return this.literal("false", false);
      case 0x6e: // n
        return this.literal("null", null);
      default:
        return this.number();
    }
  }

  private object(): Record<string, unknown> {
    // No prototype: a hostile "__proto__" key must stay a plain key.
    const result: Record<string, unknown> = Object.create(null);
    this.pos++;
    this.skipSpace();
    if (this.buf[this.pos] === 0x7d) {
      this.pos++;
      return result;
    }
    for (;;) {
      this.skipSpace();
      if (this.buf[this.pos] !== QUOTE) throw INVALID;
      const key = this.string();
      if (typeof key !== "string") throw INVALID;
      this.skipSpace();
      if (this.buf[this.pos++] !== 0x3a) throw INVALID; // :
      result[key] = this.value();
      this.skipSpace();
      const next = this.buf[this.pos++];
      if (next === 0x7d) return result; // }
      if (next !== 0x2c) throw INVALID; // ,
    }
  }

  private array(): unknown[] {
    const result: unknown[] = [];
    this.pos++;
    this.skipSpace();
    if (this.buf[this.pos] === 0x5d) {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value());
      this.skipSpace();
      const next = this.buf[this.pos++];
      if (next === 0x5d) return result; // ]
      if (next !== 0x2c) throw INVALID; // ,
    }
  }

  private string(): string | SkippedString {
    const start = this.pos + 1;
    const end = this.closingQuote(start);
    this.pos = end + 1;
    if (end - start > this.maxStringBytes) return new SkippedString(end - start);
    const backslash = this.buf.indexOf(BACKSLASH, start);
    if (backslash === -1 || backslash >= end) return this.buf.toString("utf8", start, end);
    return JSON.parse(this.buf.toString("utf8", start - 1, end + 1)) as string;
  }

  /** The position of the quote that ends a string starting at `from`: one not escaped. */
  private closingQuote(from: number): number {
    const buf = this.buf;
    let quote = buf.indexOf(QUOTE, from);
    while (quote !== -1) {
      let backslashes = 0;
      while (buf[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) return quote;
      quote = buf.indexOf(QUOTE, quote + 1);
    }
    throw INVALID;
  }

  private literal(word: string, value: boolean | null): boolean | null {
    if (this.buf.toString("latin1", this.pos, this.pos + word.length) !== word) throw INVALID;
    this.pos += word.length;
    return value;
  }

  private number(): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    for (;;) {
      const c = buf[pos];
      // 0-9 - + . e E
      if (c === undefined || !((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45)) break;
      pos++;
    }
    if (pos === start) throw INVALID;
    const value = Number(buf.toString("latin1", start, pos));
    if (!Number.isFinite(value)) throw INVALID;
    this.pos = pos;
    return value;
  }
}
