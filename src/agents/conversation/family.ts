import type { Step } from "./types.js";

/**
 * The reader of one format family, given each JSON object event of the stream in order. The
 * event's long strings are SkippedStrings whose bytes are valid only during the call: a reader
 * decodes what it keeps (textOf) before it returns, and never keeps the event.
 */
export interface FamilyReader {
  event(event: Record<string, unknown>): Step[];
  end(): Step[];
}
