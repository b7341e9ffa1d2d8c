import { BACKSLASH, DEFAULT_MAX_STRING_BYTES, QUOTE, SkippedString } from "./sparse-json.js";

/** The kinds of value a `JsonScanner` announces. */
export const OBJECT = 1;
export const ARRAY = 2;
export const STRING = 3;
export const NUMBER = 4;
/** true, false or null */
export const LITERAL = 5;

/**
 * What a `JsonScanner` tells as it goes. Only the values the handler asked for are reported;
 * the scanner passes over the others without decoding anything inside them.
 */
export interface ScanHandler {
  /**
   * A value begins. `depth` is how many containers enclose it (0: the top-level value), `key` its
   * member name in an object (null when the scanner was given the keys to tell and this is none
   * of them), its index in an array ("" at the top level). Answer true to hear about it: its
   * `scalar` value, or the `begin`s of its members and its `end`.
   */
  begin(depth: number, key: string | number | null, kind: number): boolean;
  /** The value of the string, number, true, false or null just begun; a `SkippedString` for a string longer than the limit. */
  scalar(value: string | number | boolean | null | SkippedString): void;
  /** The object or array begun at this depth ended. */
  end(depth: number): void;
}

const WANT_VALUE = 0;
const OBJECT_START = 1; // after "{": a key or "}"
const OBJECT_KEY = 2; // after ",": a key
const COLON = 3;
const ARRAY_START = 4; // after "[": a value or "]"
const AFTER_VALUE = 5;
const IN_STRING = 6;
const IN_NUMBER = 7;
const IN_LITERAL = 8;
const DONE = 9;
const FAILED = 10;

const MAX_DEPTH = 4096;

/**
 * An empty array that V8 already knows holds objects. A fresh `[]` is an array of small integers
 * to V8 until something else is pushed, and code compiled for one kind of array is thrown away
 * when it meets the other (`node --trace-deopt`: "wrong map").
 */
function bufferList(): Buffer[] {
  const list = [Buffer.alloc(0)];
  list.length = 0;
  return list;
}

/**
 * A JSON reader that takes its text in pieces, as a line arrives in chunks, and holds none of it:
 * a line of any length is read in constant memory (only the short strings a handler asked for
 * are kept until they end). Long strings are crossed with native `indexOf`; values the handler
 * does not want are crossed without decoding. The handler may `stop()` the scan at any `begin`,
 * look at what is left of the text itself, and either drop it or `write` on from where it stopped.
 * Reads what `parseSparse` reads (and is as lenient about number syntax and control characters).
 */
export class JsonScanner {
  private mode = WANT_VALUE;
  /** Containers open now; the kind and (arrays) next index of each. */
  private depth = 0;
  private readonly kinds: number[] = [];
  private readonly indexes: number[] = [];
  /** The depth of the outermost container being passed over unannounced; -1: none. */
  private silentFrom = -1;
  /** The member name of the innermost object. */
  private key: string | null = "";
  /** The member names the handler tells apart, by byte length; undefined: all are decoded. */
  private readonly keysByLength: Array<Array<{ bytes: Buffer; key: string }>> | undefined;
  /** Each of those names, to itself: a name decoded from an escaped or split key is answered with this one. */
  private readonly canonicalKeys: Map<string, string> | undefined;
  // The string being read.
  private stringIsKey = false;
  /** 0: pass over; 1: announce, keep the bytes; 2: announce as a SkippedString (too long). */
  private stringWant = 0;
  private stringLength = 0;
  /** The pieces of a wanted string that spans pieces of text; emptied, never replaced. */
  private readonly stringParts = bufferList();
  private stringEscaped = false;
  /** The previous piece ended in an odd run of backslashes: the next byte is escaped. */
  private escapeCarry = false;
  // A number or literal being read.
  private token = "";
  private tokenWanted = false;
  private stopped = false;
  /** Where the scan is in the piece being written; valid in the handler's callbacks. */
  position = 0;
  /** The next backslash at or after some position of `backslashBuf` (-1: none). */
  private backslashBuf: Buffer | undefined;
  private backslashAt = -1;

  /**
   * @param keys the member names the handler looks for, if it looks for only a few: they are
   *   then matched as bytes, nothing is decoded, and every other key is reported as null
   */
  constructor(
    private readonly handler: ScanHandler,
    private readonly maxStringBytes = DEFAULT_MAX_STRING_BYTES,
    keys?: readonly string[],
  ) {
    if (keys !== undefined) {
      this.canonicalKeys = new Map(keys.map((key) => [key, key]));
      this.keysByLength = [];
      for (const key of this.canonicalKeys.keys()) {
        const bytes = Buffer.from(key);
        (this.keysByLength[bytes.length] ??= []).push({ bytes, key });
      }
    }
  }

  /** Ready for a new text. */
  reset(): void {
    this.mode = WANT_VALUE;
    this.depth = 0;
    this.kinds.length = 0;
    this.indexes.length = 0;
    this.silentFrom = -1;
    this.key = "";
    this.stringParts.length = 0;
    this.escapeCarry = false;
    this.token = "";
    this.stopped = false;
    this.backslashBuf = undefined;
  }

  /** Called by the handler during `begin`: `write` returns right after that value's first byte. */
  stop(): void {
    this.stopped = true;
  }

  get failed(): boolean {
    return this.mode === FAILED;
  }

  /**
   * Reads `buf` from `from` on. Returns -1 once it is all read, or the position where the handler
   * stopped the scan (just past the first byte of the value it was asked about).
   */
  write(buf: Buffer, from = 0): number {
    this.stopped = false;
    let pos = from;
    const n = buf.length;
    while (pos < n) {
      const mode = this.mode;
      if (mode === IN_STRING) {
        pos = this.inString(buf, pos);
        if (this.stopped) return (this.position = pos);
        continue;
      }
      const c = buf[pos]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        if (mode === IN_NUMBER || mode === IN_LITERAL) this.endToken();
        pos++;
        continue;
      }
      switch (mode) {
        case WANT_VALUE:
        case ARRAY_START:
          if (mode === ARRAY_START && c === 0x5d) {
            pos++;
            this.close(ARRAY);
            break;
          }
          this.position = pos;
          pos = this.beginValue(pos, c);
          if (this.stopped && this.mode !== FAILED) return (this.position = pos);
          break;
        case OBJECT_START:
        case OBJECT_KEY:
          pos = this.atKey(pos, c, mode);
          break;
        case COLON:
          if (c === 0x3a) {
            this.mode = WANT_VALUE;
            pos++;
          } else this.fail();
          break;
        case AFTER_VALUE:
          this.afterValue(c);
          pos++;
          break;
        case IN_NUMBER:
        case IN_LITERAL:
          pos = this.inToken(buf, pos);
          break;
        case DONE:
        case FAILED:
        default:
          // Text after the value, or after an error: nothing more can make it valid.
          this.fail();
          return -1;
      }
      if (this.stopped) return (this.position = pos);
    }
    return -1;
  }

  /** The text ended: was it exactly one JSON value? */
  end(): boolean {
    if (this.mode === IN_NUMBER || this.mode === IN_LITERAL) this.endToken();
    return this.mode === DONE;
  }

  private fail(): void {
    this.mode = FAILED;
  }

  /** After "{" or ",": a key begins, or (right after "{") the object ends. Returns the position after `c`, or at it on an error. */
  private atKey(pos: number, c: number, mode: number): number {
    if (c === QUOTE) this.beginString(true, this.silentFrom < 0 ? 1 : 0);
    else if (c === 0x7d && mode === OBJECT_START) this.close(OBJECT);
    else {
      this.fail();
      return pos;
    }
    return pos + 1;
  }

  /** After a value: a comma, or the end of the container it is in. */
  private afterValue(c: number): void {
    if (c === 0x2c) {
      if (this.kinds[this.depth - 1] === OBJECT) this.mode = OBJECT_KEY;
      else {
        this.indexes[this.depth - 1]!++;
        this.mode = WANT_VALUE;
      }
    } else if (c === 0x7d) this.close(OBJECT);
    else if (c === 0x5d) this.close(ARRAY);
    else this.fail();
  }

  private beginValue(pos: number, c: number): number {
    const kind =
      c === 0x7b
        ? OBJECT
        : c === 0x5b
          ? ARRAY
          : c === QUOTE
            ? STRING
            : c === 0x2d || (c >= 0x30 && c <= 0x39)
              ? NUMBER
              : c === 0x74 || c === 0x66 || c === 0x6e
                ? LITERAL
                : 0;
    if (kind === 0) {
      this.fail();
      return pos;
    }
    const depth = this.depth;
    let wanted = false;
    if (this.silentFrom < 0) {
      const key = depth === 0 ? "" : this.kinds[depth - 1] === OBJECT ? this.key : this.indexes[depth - 1]!;
      wanted = this.handler.begin(depth, key, kind);
    }
    switch (kind) {
      case OBJECT:
      case ARRAY:
        if (depth >= MAX_DEPTH) {
          this.fail();
          return pos;
        }
        if (!wanted && this.silentFrom < 0) this.silentFrom = depth;
        this.kinds.push(kind);
        this.indexes.push(0);
        this.depth = depth + 1;
        this.mode = kind === OBJECT ? OBJECT_START : ARRAY_START;
        return pos + 1;
      case STRING:
        this.beginString(false, wanted ? 1 : 0);
        return pos + 1;
      default:
        this.mode = kind === NUMBER ? IN_NUMBER : IN_LITERAL;
        this.token = "";
        this.tokenWanted = wanted;
        return pos;
    }
  }

  private close(kind: number): void {
    const depth = this.depth - 1;
    if (depth < 0 || this.kinds[depth] !== kind) return this.fail();
    this.kinds.pop();
    this.indexes.pop();
    this.depth = depth;
    if (this.silentFrom === depth) this.silentFrom = -1;
    else if (this.silentFrom < 0) this.handler.end(depth);
    this.valueDone();
  }

  private valueDone(): void {
    this.mode = this.depth === 0 ? DONE : AFTER_VALUE;
  }

  private beginString(isKey: boolean, want: number): void {
    this.mode = IN_STRING;
    this.stringIsKey = isKey;
    this.stringWant = want;
    this.stringLength = 0;
    this.stringEscaped = false;
    // Setting an array's length is a call into the runtime, even to the length it has.
    if (this.stringParts.length !== 0) this.stringParts.length = 0;
  }

  /** Reads string bytes from `pos`: up to the closing quote, or the end of the piece. */
  private inString(buf: Buffer, pos: number): number {
    const start = pos;
    if (this.escapeCarry) {
      // The first byte was escaped by a backslash at the end of the previous piece.
      this.escapeCarry = false;
      this.stringEscaped = true;
      pos++;
    }
    const fresh = pos;
    let quote = buf.indexOf(QUOTE, pos);
    while (quote !== -1) {
      let backslashes = 0;
      while (quote - 1 - backslashes >= fresh && buf[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
      this.stringEscaped = true;
      quote = buf.indexOf(QUOTE, quote + 1);
    }
    const end = quote === -1 ? buf.length : quote;
    this.stringLength += end - start;
    const limit = this.stringIsKey ? Infinity : this.maxStringBytes;
    if (this.stringWant === 1 && this.stringLength > limit) {
      this.stringWant = 2;
      this.stringParts.length = 0;
    }
    if (quote === -1) {
      let backslashes = 0;
      while (end - 1 - backslashes >= fresh && buf[end - 1 - backslashes] === BACKSLASH) backslashes++;
      this.escapeCarry = backslashes % 2 === 1;
      if (this.stringWant === 1) this.stringParts.push(Buffer.from(buf.subarray(start, end))); // a copy: the piece is not ours
      return end;
    }
    this.position = quote + 1;
    if (this.stringWant === 0 && !this.stringIsKey) {
      this.valueDone();
      return quote + 1;
    }
    if (this.stringIsKey) {
      if (this.stringWant === 1)
        this.key = this.keysByLength === undefined ? (this.decode(buf, start, quote) ?? "") : this.knownKey(buf, start, quote);
      if (this.mode !== FAILED) this.mode = COLON;
      return quote + 1;
    }
    const value = this.stringWant === 2 ? new SkippedString(this.stringLength) : this.decode(buf, start, quote);
    if (value === undefined) return quote + 1; // an invalid escape: failed
    this.valueDone();
    this.handler.scalar(value);
    return quote + 1;
  }

  /** The key in `buf[start..end]` if it is one of the keys asked for, else null. */
  private knownKey(buf: Buffer, start: number, end: number): string | null {
    if (this.stringParts.length > 0 || this.escapedWithin(buf, start, end)) {
      const key = this.decode(buf, start, end);
      return key === undefined ? null : (this.canonicalKeys!.get(key) ?? null);
    }
    const candidates = this.keysByLength![end - start];
    if (candidates === undefined) return null;
    next: for (const { bytes, key } of candidates) {
      for (let i = 0; i < bytes.length; i++) if (buf[start + i] !== bytes[i]) continue next;
      return key;
    }
    return null;
  }

  /** Does the string in `buf[start..end]` (all in this piece) hold an escape? */
  private escapedWithin(buf: Buffer, start: number, end: number): boolean {
    if (this.stringEscaped) return true;
    // One search per piece, not per string: a line of many short strings stays linear.
    if (this.backslashBuf !== buf || (this.backslashAt !== -1 && this.backslashAt < start)) {
      this.backslashBuf = buf;
      this.backslashAt = buf.indexOf(BACKSLASH, start);
    }
    return this.backslashAt !== -1 && this.backslashAt < end;
  }

  private decode(buf: Buffer, start: number, end: number): string | undefined {
    let text: string;
    let escaped: boolean;
    if (this.stringParts.length === 0) {
      escaped = this.escapedWithin(buf, start, end);
      text = buf.toString("utf8", start, end);
    } else {
      this.stringParts.push(buf.subarray(start, end));
      const bytes = Buffer.concat(this.stringParts);
      this.stringParts.length = 0;
      escaped = bytes.includes(BACKSLASH);
      text = bytes.toString("utf8");
    }
    if (!escaped) return text;
    try {
      return JSON.parse(`"${text}"`) as string;
    } catch {
      this.fail();
      return undefined;
    }
  }

  private inToken(buf: Buffer, pos: number): number {
    const start = pos;
    const n = buf.length;
    if (this.mode === IN_NUMBER) {
      for (; pos < n; pos++) {
        const c = buf[pos]!;
        // 0-9 - + . e E
        if (!((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45)) break;
      }
    } else {
      for (; pos < n; pos++) {
        const c = buf[pos]!;
        if (c < 0x61 || c > 0x7a) break; // a-z
      }
    }
    this.token += buf.toString("latin1", start, pos);
    if (pos < n) this.endToken();
    return pos;
  }

  private endToken(): void {
    const token = this.token;
    this.token = "";
    let value: number | boolean | null;
    if (this.mode === IN_NUMBER) {
      value = Number(token);
      if (!Number.isFinite(value)) return this.fail();
    } else if (token === "true") value = true;
    else if (token === "false") value = false;
    else if (token === "null") value = null;
    else return this.fail();
    this.valueDone();
    if (this.tokenWanted) this.handler.scalar(value);
  }
}
