/**
 * What the server's transcript length means for the next append (docs/api.md: a 200 gives the
 * length after the append, a 409 `offset_mismatch` the length it has). Our session id is ours
 * alone, so the server's bytes are our bytes: we go on from its length, if we still hold the
 * bytes from there. Pure.
 */
export interface Held {
  /** The oldest offset we can still send (bytes before it were acknowledged and let go). */
  from: number;
  /** Bytes recorded so far. */
  end: number;
}

export type Resume = { ok: true; offset: number } | { ok: false; reason: string };

export function resumeAt(serverLength: number, held: Held): Resume {
  if (serverLength > held.end) {
    return { ok: false, reason: `the server holds ${serverLength} bytes of this session's transcript, more than the ${held.end} recorded` };
  }
  if (serverLength < held.from) {
    return {
      ok: false,
      reason: `the server holds only ${serverLength} bytes of this session's transcript, but ${held.from} were acknowledged and are no longer kept`,
    };
  }
  return { ok: true, offset: serverLength };
}
