/**
 * Chunks as stdin read in place gives them (src/stream/stdin.ts): each a view of one buffer that
 * the next read overwrites. Here it is overwritten (0xEE) as soon as `push` returns, so that a
 * consumer that kept a view of a chunk instead of a copy reads garbage, and its test fails.
 * Chunk sizes cycle through `sizes`; none given: the whole stream in one chunk.
 */
export function pushInPlace(bytes: Buffer, sizes: readonly number[], push: (chunk: Buffer) => void): void {
  const size = (i: number) => Math.max(1, sizes.length ? sizes[i % sizes.length]! : bytes.length);
  const buffer = Buffer.alloc(Math.min(bytes.length, sizes.length ? Math.max(1, ...sizes) : bytes.length));
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const length = bytes.copy(buffer, 0, at, at + size(i));
    push(buffer.subarray(0, length));
    buffer.fill(0xee);
    at += length;
  }
}
