// Guards of a multipart body while it streams in, before the platform parses it: the parser holds
// every part (a million tiny parts of a 64 MiB body were ~300 MiB and 2 s), so a body with more
// parts than allowed must be refused before it is read whole. Counting is no parsing: each part
// begins with the boundary delimiter, so the delimiters seen bound the parts from above.

/** The boundary of a multipart Content-Type, or undefined when it has none. */
export function multipartBoundary(contentType: string): string | undefined {
  if (!/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s"]{1,70}))(?:[;\s]|$)/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** Counts the (non-overlapping) occurrences of `needle` in a stream of chunks, across their edges. */
export class OccurrenceCounter {
  count = 0;
  private tail: Buffer = Buffer.alloc(0);

  constructor(private readonly needle: Buffer) {}

  /** Counts what `chunk` adds; returns the count so far. */
  push(chunk: Buffer): number {
    const data = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    let end = 0;
    for (let at = data.indexOf(this.needle); at !== -1; at = data.indexOf(this.needle, end)) {
      this.count++;
      end = at + this.needle.length;
    }
    // Keep what may begin an occurrence that ends in the next chunk (copied: the chunk is let go).
    this.tail = Buffer.from(data.subarray(Math.max(end, data.length - this.needle.length + 1)));
    return this.count;
  }
}
