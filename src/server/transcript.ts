// Pure rule of transcript appends (docs/api.md: PUT /sessions/{id}/events?offset=N).

export type AppendPlan = { kind: "append"; bytes: Buffer } | { kind: "mismatch" };

/**
 * What to do with `body` sent at `offset` of a transcript that holds `length` bytes, where
 * `stored` gives the stored bytes from `offset` on (at most `body.length` of them). Bytes the
 * transcript already has at that place are not appended twice (a retried batch); only the new
 * tail is. Any other offset, or different bytes where they overlap, is a mismatch.
 */
export function planAppend(length: number, offset: number, body: Buffer, stored: Buffer): AppendPlan {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > length) return { kind: "mismatch" };
  const overlap = Math.min(length - offset, body.length);
  if (stored.length < overlap || !stored.subarray(0, overlap).equals(body.subarray(0, overlap))) {
    return { kind: "mismatch" };
  }
  return { kind: "append", bytes: body.subarray(overlap) };
}
