import { ApiError, type ApiClient } from "../transfer/client.js";
import { retry, type BackoffPolicy } from "../transfer/retry.js";
import { resumeAt, type Held } from "./resume.js";
import { UsparkError } from "../errors/base.js";

/**
 * One append of a transcript (PUT /sessions/{id}/events?offset=N), with the commits' retry
 * policy, resumed from the server's length. Used by the live session and by `push --pending`.
 */

/** At most this much in one request (docs/api.md). */
export const MAX_APPEND_BYTES = 8 * 1024 * 1024;

/** The server does not have the sessions route (404/405: a v1 server), transcripts not supported. */
export class TranscriptsNotSupported extends UsparkError {
  readonly code = "transcripts_not_supported";
  override readonly name = "TranscriptsNotSupported";
}

/** The transcript cannot go on for this session (401/403, a length we cannot resume from, …). */
export class TranscriptFailed extends UsparkError {
  readonly code = "transcript_failed";
  override readonly name = "TranscriptFailed";
}

export interface TranscriptSource extends Held {
  /** Up to `max` bytes from offset `from` (from <= from < end); valid until the next read. */
  read(from: number, max: number): Promise<Buffer>;
}

export interface AppendOptions {
  client: ApiClient;
  sessionId: string;
  signal: AbortSignal;
  backoff?: BackoffPolicy;
  /** Told before each wait for a retry. */
  onRetry?: (error: unknown, delayMs: number) => void;
  /** Cuts a retry's wait short (the end of input: try now). */
  wake?: () => Promise<void>;
}

/** Sends the next piece from `offset`; returns the offset the server now has (the next to send). */
export async function appendNext(source: TranscriptSource, offset: number, options: AppendOptions): Promise<number> {
  const bytes = await source.read(offset, MAX_APPEND_BYTES);
  let answer;
  try {
    answer = await retry(() => options.client.appendEvents(options.sessionId, offset, bytes, options.signal), {
      signal: options.signal,
      policy: options.backoff,
      wake: options.wake,
      onRetry: (error, _attempt, delayMs) => options.onRetry?.(error, delayMs),
    });
  } catch (error) {
    // 404/405 on the route, as the client classifies it; a 404 project_not_found (a wrong
    // --project-id) is a failure, never "a v1 server": the transcript is kept.
    if (error instanceof ApiError && error.code === "unsupported") {
      throw new TranscriptsNotSupported(`the server does not take transcripts (${error.status} on the sessions route: a v1 server)`);
    }
    if (error instanceof ApiError) throw new TranscriptFailed(error.message, { cause: error });
    throw error;
  }
  if (!answer.appended && answer.length === offset) {
    throw new TranscriptFailed(`the server refused an append at offset ${offset}, its own length`);
  }
  const next = resumeAt(answer.length, source);
  if (!next.ok) throw new TranscriptFailed(next.reason);
  return next.offset;
}
