/**
 * Compares a stream with the bytes it should carry (`expected`, in order) chunk by chunk as it
 * arrives, holding no copy of it: for streams of hundreds of MiB, where holding them (and
 * touching that much fresh memory) cost a test more than the behaviour it checks.
 */
export class SameBytes {
  /** Bytes written so far. */
  bytes = 0;
  /** The offset of the first chunk that differs from what was expected there (or runs past its end); null while none did. */
  differsAt: number | null = null;
  readonly expectedBytes: number;
  private piece = 0;
  private offset = 0;

  constructor(private readonly expected: readonly Buffer[]) {
    this.expectedBytes = expected.reduce((sum, piece) => sum + piece.length, 0);
  }

  write(chunk: Buffer): void {
    if (this.differsAt === null && !this.matches(chunk)) this.differsAt = this.bytes;
    this.bytes += chunk.length;
  }

  /** What a test asserts: `{ bytes: expectedBytes, differsAt: null }` when the stream was exactly the expected bytes. */
  verdict(): { bytes: number; differsAt: number | null } {
    return { bytes: this.bytes, differsAt: this.differsAt };
  }

  private matches(chunk: Buffer): boolean {
    for (let at = 0; at < chunk.length;) {
      const want = this.expected[this.piece];
      if (!want) return false;
      const n = Math.min(want.length - this.offset, chunk.length - at);
      if (!chunk.subarray(at, at + n).equals(want.subarray(this.offset, this.offset + n))) return false;
      at += n;
      this.offset += n;
      if (this.offset === want.length) {
        this.piece++;
        this.offset = 0;
      }
    }
    return true;
  }
}
