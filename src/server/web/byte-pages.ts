// Pages of stored bytes (a long file, a 200 MiB transcript) by byte offset: each page starts at a
// line start and ends after a line end, and reads only its own bytes (plus one before it).

import type { StoredBytes } from "../store.js";

export interface BytePage {
  /** Where the page starts (a line start at or after the offset asked for). */
  start: number;
  bytes: Buffer;
  /** Where the next page starts, or undefined at the end. */
  next: number | undefined;
}

/** At most `max` bytes of `stored` read from `from` on. */
export async function readBytes(stored: StoredBytes, from: number, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  if (max <= 0) return Buffer.alloc(0);
  for await (const chunk of stored.chunks(from)) {
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    length += chunk.byteLength;
    if (length >= max) break; // leaving the loop closes the stream: the rest is never read
  }
  return Buffer.concat(chunks).subarray(0, max);
}

/**
 * The page of about `pageBytes` from `from`: with `align`, from the first line start at or after
 * it (an offset a person picked); without, exactly there (a `next` this function gave). A line
 * longer than a page is cut (at a UTF-8 character edge) and goes on in the next page.
 */
export async function readPage(stored: StoredBytes, from: number, pageBytes: number, align: boolean): Promise<BytePage> {
  const asked = Math.min(Math.max(0, from), stored.size);
  // The byte before says whether `asked` is a line start.
  const before = align && asked > 0 ? 1 : 0;
  let bytes = await readBytes(stored, asked - before, pageBytes + before);
  let start = asked;
  if (before === 1) {
    const newline = bytes.indexOf(10);
    const skip = bytes[0] === 10 ? 1 : newline < 0 ? bytes.length : newline + 1;
    bytes = bytes.subarray(skip);
    start = asked - 1 + skip;
  }
  if (start + bytes.length >= stored.size) return { start, bytes, next: undefined };
  const lastNewline = bytes.lastIndexOf(10);
  const keep = lastNewline >= 0 ? lastNewline + 1 : utf8Edge(bytes);
  return { start, bytes: bytes.subarray(0, keep), next: start + keep };
}

/** The longest prefix of `bytes` that does not end inside a UTF-8 character. */
function utf8Edge(bytes: Buffer): number {
  const end = bytes.length;
  // Up to 3 continuation bytes (10xxxxxx) may follow a lead byte.
  for (let back = 1; back <= 4 && end - back >= 0; back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const width = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return width > back ? end - back : end;
  }
  return end;
}

/** How many lines start before `offset` (the 1-based number of the line there): one pass over those bytes. */
export async function lineNumberAt(stored: StoredBytes, offset: number): Promise<number> {
  let line = 1;
  let seen = 0;
  for await (const chunk of stored.chunks(0)) {
    const part = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, offset - seen));
    for (let at = part.indexOf(10); at >= 0; at = part.indexOf(10, at + 1)) line++;
    seen += part.length;
    if (seen >= offset) break;
  }
  return line;
}

/** Does this head of a file look like text: no NUL, and valid UTF-8 (a character cut at its end aside)? */
export function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, utf8Edge(head)));
    return true;
  } catch {
    return false;
  }
}
