/** The bytes of `"text"`, quotes included: what a JSON line holds for that string value or key. */
export function needle(text: string): Buffer {
  return Buffer.from(JSON.stringify(text));
}

/**
 * A needle found fast where one of its bytes is rare in the haystack: `"tool_use"` is looked for
 * as its `_`, with memchr (a single-byte `indexOf`), and checked where one turns up; file contents
 * and prose seldom have that byte, so most of a long line is crossed at memory speed instead of
 * with `Buffer.indexOf`'s Boyer-Moore-Horspool, which is slow on text made of the needle's own
 * letters. Where the rare byte turns out to be common, it falls back to `Buffer.indexOf`; and a
 * short haystack (an event's head, a line of prose) goes straight to `Buffer.indexOf`: Claude's
 * own keys are full of `_` (`input_tokens`, `session_id`), and one native search costs less than
 * the memchr calls and checks of the rare byte's turns, most of all before V8 has compiled them.
 */
export class Needle {
  /** The needle's bytes: `"text"`, quotes included. */
  readonly bytes: Buffer;
  private readonly rare: number;
  private readonly rareAt: number;

  constructor(text: string) {
    this.bytes = needle(text);
    let best = 0;
    for (let i = 1; i < this.bytes.length; i++) if (commonness(this.bytes[i]!) < commonness(this.bytes[best]!)) best = i;
    this.rareAt = best;
    this.rare = this.bytes[best]!;
  }

  /** Where the needle is in `buf` at or after `from`, or -1. */
  indexIn(buf: Buffer, from = 0): number {
    const bytes = this.bytes;
    if (buf.length - from <= SHORT_HAYSTACK) return buf.indexOf(bytes, from);
    const n = bytes.length;
    let pos = from + this.rareAt;
    for (let hits = 1; ; hits++) {
      const at = buf.indexOf(this.rare, pos);
      if (at === -1) return -1;
      const start = at - this.rareAt;
      let k = 0;
      while (k < n && buf[start + k] === bytes[k]) k++;
      if (k === n) return start;
      // The rare byte is not rare here (one every few hundred bytes): the general search is cheaper.
      if (hits >= 8 && at - from < hits * 512) return buf.indexOf(bytes, start + 1);
      pos = at + 1;
    }
  }

  in(buf: Buffer, from = 0): boolean {
    return this.indexIn(buf, from) !== -1;
  }
}

/** Up to this many bytes a `Needle` is looked for with `Buffer.indexOf` alone (`npm run bench`, throughput). */
const SHORT_HAYSTACK = 2048;

/** How common a byte is in source code and prose, roughly: 0 rare … 3 everywhere. */
function commonness(c: number): number {
  if ((c >= 0x61 && c <= 0x7a) || c === 0x20 || c === 0x22) return 3; // a-z, space, quote (every key and string)
  if (c >= 0x30 && c <= 0x39) return 2; // 0-9
  if (c >= 0x41 && c <= 0x5a) return 1; // A-Z
  return 0;
}
