/**
 * A JSON reader for agent events that does not materialise what the watcher never needs.
 * Strings longer than a limit (file contents, tool output) are skipped with native `indexOf`
 * and stand as a `SkippedString`; everything else reads as `JSON.parse` would read it.
 * Invalid JSON yields `undefined`: a stream line is never a reason to throw.
 */
export class SkippedString {
  /**
   * @param byteLength the size of the string's JSON text between its quotes, escapes included
   * @param raw that text itself (escapes undecoded): a view into the parsed buffer, so only
   *   valid as long as that buffer is (for a stream line: during the call that got it)
   */
  constructor(
    readonly byteLength: number,
    readonly raw?: Buffer,
  ) {}
}

export const DEFAULT_MAX_STRING_BYTES = 16 * 1024;

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
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

/** A JSON object: not an array, not null, and not a SkippedString (which stands for a string). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof SkippedString);
}

export const EMBEDDED_PREFIX_BYTES = 64 * 1024;

/**
 * Reads an object that an event carries as a JSON *string*, like the `arguments` of an
 * OpenAI-style tool call: `"arguments":"{\"path\":\"a.ts\",\"content\":\"…\"}"`.
 * A short string is parsed as it is. A long one (read as a `SkippedString`, while its line's
 * buffer is still valid) is decoded only as far as needed: its first `prefixBytes` first,
 * and the whole only when one of `fields` is not among the members complete in that prefix.
 * Long strings inside the embedded object are skipped as usual. Invalid input: `undefined`.
 */
export function parseEmbeddedObject(
  value: unknown,
  fields: readonly string[],
  prefixBytes = EMBEDDED_PREFIX_BYTES,
): Record<string, unknown> | undefined {
  if (typeof value === "string") return parseEvent(Buffer.from(value));
  if (isObject(value)) return value; // some agents send arguments as an object after all
  if (!(value instanceof SkippedString) || value.raw === undefined) return undefined;
  const prefix = unescapeJsonString(value.raw, prefixBytes);
  if (prefix === undefined) return undefined;
  if (prefix.complete) return parseEvent(prefix.bytes);
  const partial = parseObjectPrefix(prefix.bytes);
  if (partial !== undefined && fields.every((field) => Object.hasOwn(partial, field))) return partial;
  const whole = unescapeJsonString(value.raw, Infinity);
  return whole === undefined ? undefined : parseEvent(whole.bytes);
}

/** The members of a JSON object that are complete before `buf` ends (a truncated object). */
export function parseObjectPrefix(buf: Buffer, maxStringBytes?: number): Record<string, unknown> | undefined {
  try {
    return new SparseReader(buf, maxStringBytes ?? DEFAULT_MAX_STRING_BYTES).objectPrefix();
  } catch {
    return undefined;
  }
}

/**
 * Decodes the text of a JSON string (between its quotes, escapes included) into UTF-8 bytes,
 * stopping once `limit` bytes are out. Decoding never grows the text, so the output fits in a
 * buffer of the input's size. An invalid escape: `undefined`.
 */
export function unescapeJsonString(raw: Buffer, limit: number): { bytes: Buffer; complete: boolean } | undefined {
  const out = Buffer.allocUnsafe(Math.min(raw.length, limit + 4));
  let o = 0;
  let i = 0;
  while (i < raw.length) {
    if (o >= limit) return { bytes: out.subarray(0, o), complete: false };
    const windowEnd = Math.min(raw.length, i + (limit - o));
    const found = raw.subarray(i, windowEnd).indexOf(BACKSLASH);
    const runEnd = found === -1 ? windowEnd : i + found;
    o += raw.copy(out, o, i, runEnd);
    i = runEnd;
    if (found === -1) continue; // the window ended: either the input or the limit
    const escaped = raw[i + 1];
    i += 2;
    switch (escaped) {
      case QUOTE:
      case BACKSLASH:
      case 0x2f: // /
        out[o++] = escaped;
        break;
      case 0x62: // b
        out[o++] = 0x08;
        break;
      case 0x66: // f
        out[o++] = 0x0c;
        break;
      case 0x6e: // n
        out[o++] = 0x0a;
        break;
      case 0x72: // r
        out[o++] = 0x0d;
        break;
      case 0x74: // t
        out[o++] = 0x09;
        break;
      case 0x75: {
        // u
        let code = hex4(raw, i);
        if (code < 0) return undefined;
        i += 4;
        if (code >= 0xd800 && code <= 0xdbff && raw[i] === BACKSLASH && raw[i + 1] === 0x75) {
          const low = hex4(raw, i + 2);
          if (low >= 0xdc00 && low <= 0xdfff) {
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            i += 6;
          }
        }
        if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd; // a lone surrogate, as Buffer.from(string) writes it
        o += out.write(String.fromCodePoint(code), o, "utf8");
        break;
      }
      default:
        return undefined;
    }
  }
  return { bytes: out.subarray(0, o), complete: true };
}

function hex4(buf: Buffer, at: number): number {
  if (at + 4 > buf.length) return -1;
  const text = buf.toString("latin1", at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(text) ? Number.parseInt(text, 16) : -1;
}

class SparseReader {
  private pos = 0;
  /** Where the next backslash at or after `pos` is (-1: none): one memchr for the whole line. */
  private nextBackslash = -2;

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

  /** The members of an object that are complete before the buffer ends, then stop. */
  objectPrefix(): Record<string, unknown> {
    const result: Record<string, unknown> = Object.create(null);
    this.skipSpace();
    if (this.buf[this.pos++] !== 0x7b) throw INVALID; // {
    for (;;) {
      this.skipSpace();
      if (this.buf[this.pos] !== QUOTE) return result;
      let key: string;
      let value: unknown;
      try {
        key = this.string(Infinity) as string;
        this.skipSpace();
        if (this.buf[this.pos++] !== 0x3a) return result; // :
        value = this.value();
      } catch {
        return result; // cut off inside this member
      }
      this.skipSpace();
      const next = this.buf[this.pos++];
      // A member counts only once something follows it: "12" may be the start of "123".
      if (next !== 0x2c && next !== 0x7d) return result;
      result[key] = value;
      if (next === 0x7d) return result;
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
      const key = this.string(Infinity) as string; // keys are always read, however long
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

  private string(maxBytes = this.maxStringBytes): string | SkippedString {
    const start = this.pos + 1;
    const end = this.closingQuote(start);
    this.pos = end + 1;
    if (end - start > maxBytes) return new SkippedString(end - start, this.buf.subarray(start, end));
    // Searching each string for a backslash up to the end of the line would make a line of
    // many short strings quadratic; remember where the next one is instead.
    if (this.nextBackslash !== -1 && this.nextBackslash < start) this.nextBackslash = this.buf.indexOf(BACKSLASH, start);
    if (this.nextBackslash === -1 || this.nextBackslash >= end) return this.buf.toString("utf8", start, end);
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

/** The JSON string after `"key"` at `from` (`: "value"`), decoded; undefined if not a string. */
export function stringValueAfter(line: Buffer, from: number): string | undefined {
  let i = from;
  while (isSpace(line[i])) i++;
  if (line[i] !== 0x3a) return undefined; // :
  i++;
  while (isSpace(line[i])) i++;
  if (line[i] !== QUOTE) return undefined;
  const start = i;
  let escaped = false;
  for (i = start + 1; i < line.length; i++) {
    const c = line[i];
    if (c === BACKSLASH) {
      escaped = true;
      i++;
    } else if (c === QUOTE) {
      if (!escaped) return line.toString("utf8", start + 1, i);
      try {
        return JSON.parse(line.toString("utf8", start, i + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
