/**
 * Watches the first lines of a stream for a JSON event (a line whose first non-blank byte is
 * `{`): an agent started without its stream flag prints text, and only the file watcher could
 * then see its changes. Calls `onNoJson` once: after `maxLines` non-blank lines without one, or
 * at the end of a shorter stream that had any. Decides within the first lines and is then done:
 * the caller drops it, so the rest of the stream costs nothing.
 */
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;

export class JsonSniffer {
  /** True once it saw a JSON line or warned: nothing more to look at. */
  decided = false;
  private lines = 0;
  private atLineStart = true;

  constructor(
    private readonly maxLines: number,
    private readonly onNoJson: () => void,
  ) {}

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length && !this.decided) {
      if (this.atLineStart) {
        i = skipBlanks(chunk, i);
        if (i >= chunk.length) return;
        if (chunk[i] === NEWLINE) {
          i++;
          continue;
        }
        this.atLineStart = false;
        this.firstByte(chunk[i]!);
        if (this.decided) return;
      }
      const newline = chunk.indexOf(NEWLINE, i);
      if (newline < 0) return;
      i = newline + 1;
      this.atLineStart = true;
    }
  }

  end(): void {
    if (!this.decided && this.lines > 0) this.noJson();
  }

  private firstByte(byte: number): void {
    if (byte === OPEN_BRACE) this.decided = true;
    else if (++this.lines >= this.maxLines) this.noJson();
  }

  private noJson(): void {
    this.decided = true;
    this.onNoJson();
  }
}

function skipBlanks(chunk: Buffer, from: number): number {
  let i = from;
  while (i < chunk.length && (chunk[i] === 0x20 || chunk[i] === 0x09 || chunk[i] === 0x0d)) i++;
  return i;
}
