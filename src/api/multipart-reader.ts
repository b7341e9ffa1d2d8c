// Reads multipart/form-data (RFC 7578, framed as RFC 2046 §5.1.1 says) as it streams in.

import { CRLF } from "./multipart.js";
import { UsparkError } from "../errors/base.js";

/** The boundary of a multipart/form-data Content-Type, or undefined when it has none. */
export function multipartBoundary(contentType: string): string | undefined {
  if (!/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s"]{1,70}))(?:[;\s]|$)/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** What a body holds, in order: each part's name, its bytes in pieces, its end. */
export type MultipartEvent = { kind: "part"; name: string } | { kind: "data"; bytes: Buffer } | { kind: "end" };

/** The body is not multipart/form-data as its boundary frames it. */
export class MultipartError extends UsparkError {
  readonly code = "multipart";
}

const EMPTY = Buffer.alloc(0);
const HEADERS_END = Buffer.from("\r\n\r\n");
/** A part's headers longer than this are no header (8 KiB, as an HTTP server's limit per header). */
export const MAX_PART_HEADER_BYTES = 8 * 1024;

// Where the reader is.
const PREAMBLE = 0; // before the first delimiter
const AFTER_DELIMITER = 1; // "--" ends the body, CRLF begins a part
const HEADERS = 2;
const BODY = 3;
const DONE = 4; // after the closing delimiter: the epilogue is ignored

/**
 * A multipart body read chunk by chunk, holding no part: each chunk gives the events it
 * completes, a part's bytes as views of the chunk (valid as long as the chunk is). Only the bytes
 * at a chunk's end that begin a delimiter are held over to the next chunk (mostly none, so the
 * next chunk is not copied), and a part's headers until they end. The body is read as if it
 * began with CRLF, so that the first delimiter (which may open the body) is found as every other
 * is: CRLF, "--", the boundary.
 */
export class MultipartReader {
  private readonly delimiter: Buffer;
  private state = PREAMBLE;
  private carry: Buffer = CRLF;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** The events `chunk` completes. Throws a MultipartError at the first malformed byte. */
  push(chunk: Buffer): MultipartEvent[] {
    const data = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    this.carry = EMPTY;
    const events: MultipartEvent[] = [];
    let pos = 0;
    while (pos < data.length && this.state !== DONE) {
      const next = this.step(data, pos, events);
      if (next === -1) break; // the rest is held over
      pos = next;
    }
    return events;
  }

  /** The body ended: it must have ended with its closing delimiter. */
  end(): void {
    if (this.state !== DONE) throw new MultipartError("the body ends before its closing delimiter (cut short, or a wrong boundary?)");
  }

  /** Reads on from `pos`; returns where to go on, or -1 once what is left is held over. */
  private step(data: Buffer, pos: number, events: MultipartEvent[]): number {
    switch (this.state) {
      case PREAMBLE:
      case BODY:
        return this.untilDelimiter(data, pos, events);
      case AFTER_DELIMITER:
        return this.afterDelimiter(data, pos);
      default:
        return this.headers(data, pos, events);
    }
  }

  /** A part's bytes (the preamble's are dropped) up to the next delimiter. */
  private untilDelimiter(data: Buffer, pos: number, events: MultipartEvent[]): number {
    const at = data.indexOf(this.delimiter, pos);
    const inBody = this.state === BODY;
    if (at === -1) {
      // Hold over what begins a delimiter that may end in the next chunk (mostly nothing).
      const safe = data.length - this.delimiterBegun(data, pos);
      if (inBody && safe > pos) events.push({ kind: "data", bytes: data.subarray(pos, safe) });
      this.hold(data, safe);
      return -1;
    }
    if (inBody) {
      if (at > pos) events.push({ kind: "data", bytes: data.subarray(pos, at) });
      events.push({ kind: "end" });
    }
    this.state = AFTER_DELIMITER;
    return at + this.delimiter.length;
  }

  /** "--" closes the body; else (after optional blanks) CRLF opens a part. */
  private afterDelimiter(data: Buffer, pos: number): number {
    let at = pos;
    while (at < data.length && (data[at] === 0x20 || data[at] === 0x09)) at++; // transport padding
    if (data.length - at < 2) {
      this.hold(data, pos);
      return -1;
    }
    if (at === pos && data[at] === 0x2d && data[at + 1] === 0x2d) {
      this.state = DONE;
      return data.length;
    }
    if (data[at] !== 0x0d || data[at + 1] !== 0x0a) throw new MultipartError("a boundary delimiter is followed by neither CRLF nor --");
    this.state = HEADERS;
    return at + 2;
  }

  /** A part's headers, whole: its name is all that is read of them. */
  private headers(data: Buffer, pos: number, events: MultipartEvent[]): number {
    if (data[pos] === 0x0d && data[pos + 1] === 0x0a)
      throw new MultipartError("a part has no headers (form-data needs its Content-Disposition)");
    const end = data.indexOf(HEADERS_END, pos);
    if (end - pos > MAX_PART_HEADER_BYTES || (end === -1 && data.length - pos > MAX_PART_HEADER_BYTES)) {
      throw new MultipartError(`a part's headers run past ${MAX_PART_HEADER_BYTES} bytes`);
    }
    if (end === -1) {
      this.hold(data, pos);
      return -1;
    }
    events.push({ kind: "part", name: partName(data.toString("latin1", pos, end)) });
    this.state = BODY;
    return end + HEADERS_END.length;
  }

  /** How many of the last bytes of `data[from..]` are the delimiter's first bytes. */
  private delimiterBegun(data: Buffer, from: number): number {
    const delimiter = this.delimiter;
    for (let k = Math.min(delimiter.length - 1, data.length - from); k > 0; k--) {
      if (data[data.length - k] === delimiter[0] && data.compare(delimiter, 0, k, data.length - k) === 0) return k;
    }
    return 0;
  }

  /** Keeps `data[from..]` for the next chunk (a copy: the chunk is let go). */
  private hold(data: Buffer, from: number): void {
    this.carry = from === data.length ? EMPTY : Buffer.from(data.subarray(from));
  }
}

/** The `name` of a part's Content-Disposition: form-data header. */
function partName(headers: string): string {
  for (const line of headers.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== "content-disposition") continue;
    const value = line.slice(colon + 1);
    if (!/^\s*form-data\s*(;|$)/i.test(value)) break;
    const name = /;\s*name\s*=\s*(?:"([^"]*)"|([^;\s"]+))/i.exec(value);
    if (name) return Buffer.from(name[1] ?? name[2]!, "latin1").toString("utf8");
    break;
  }
  throw new MultipartError("a part has no Content-Disposition: form-data with a name");
}
