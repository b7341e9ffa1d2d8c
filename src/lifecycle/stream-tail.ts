import { createConversationReader } from "../agents/conversation/index.js";

/**
 * The last bytes of the agent's stdout, for its failure reason when nobody sees its stream (a pipe
 * or a file: CI). Claude Code says "Not logged in" only in its final result event; the run view
 * shows it on a terminal, and this says it on stderr otherwise. Copied: the passthrough reuses its
 * read buffer. At most `size` bytes of each chunk are copied, so a long stream costs little.
 */
export class StreamTail {
  private readonly ring: Buffer;
  private total = 0;

  constructor(size = 64 * 1024) {
    this.ring = Buffer.allocUnsafe(size);
  }

  push(chunk: Buffer): void {
    const size = this.ring.length;
    const kept = chunk.subarray(Math.max(0, chunk.length - size));
    const at = (this.total + (chunk.length - kept.length)) % size;
    const first = Math.min(kept.length, size - at);
    kept.copy(this.ring, at, 0, first);
    kept.copy(this.ring, 0, first);
    this.total += chunk.length;
  }

  /** What was kept, oldest first; `whole` when it is the stream from its first byte. */
  bytes(): { bytes: Buffer; whole: boolean } {
    const size = this.ring.length;
    if (this.total <= size) return { bytes: this.ring.subarray(0, this.total), whole: true };
    const at = this.total % size;
    return { bytes: Buffer.concat([this.ring.subarray(at), this.ring.subarray(0, at)]), whole: false };
  }
}

/** The agent's failure reason from its last result event in `tail` (a failed Claude `result`, Codex `turn.failed`, …), or undefined. */
export function failureReason(tail: { bytes: Buffer; whole: boolean }, format: string | undefined): string | undefined {
  const reader = createConversationReader(format);
  const lines = tail.bytes.toString("utf8").split("\n");
  // A tail that starts inside a line holds no whole event there.
  if (!tail.whole) lines.shift();
  let last: { ok: boolean; text: string } | undefined;
  for (const line of lines) {
    for (const step of reader.line(line)) if (step.kind === "result") last = step;
  }
  return last && !last.ok && last.text.trim() !== "" ? last.text.trim() : undefined;
}
