import { Needle } from "./needle.js";
import { stringValueAfter } from "./sparse-json.js";
import type { ChangeSink, FileChange } from "./types.js";

/** The changes one tool call will make, waiting for the call's result. */
export type PendingChange = Omit<FileChange, "confirmed">;

/** A pending change with its outcome: built member by member, as a spread costs five times more (one per tool call). */
export function outcome({ path, kind, cause, cwd }: PendingChange, confirmed: boolean): FileChange {
  return cwd === undefined ? { path, kind, cause, confirmed } : { path, kind, cause, confirmed, cwd };
}

export interface PendingCallsOptions {
  /** The JSON keys whose string value names the call a result line answers (`tool_use_id`, …), for `mentionedIn`. */
  idKeys?: readonly string[];
  now?: () => number;
}

/** At most this many calls wait; past it the oldest is reported unconfirmed. */
const MAX_CALLS = 10_000;
/** A call waiting longer than this is reported unconfirmed. */
const MAX_AGE_MS = 60 * 60 * 1000;

/**
 * Tool calls whose result has not come yet, by call id. A result names its call under one of
 * `idKeys`, so `mentionedIn` reads the ids a line names there and looks each up: the cost of a
 * line does not grow with the number of calls waiting. A call whose result never comes is not
 * kept forever: past `maxCalls` or `maxAgeMs` it is reported unconfirmed (the sync engine then
 * checks the file by hash), never dropped silently.
 */
export class PendingCalls {
  private readonly calls = new Map<string, { at: number; changes: PendingChange[] }>();
  private readonly keys: Needle[];
  private readonly now: () => number;
  /** Ids looked up by `mentionedIn` so far: the work it did, for tests. */
  lookups = 0;

  constructor(
    private readonly emit: ChangeSink,
    options: PendingCallsOptions = {},
  ) {
    this.keys = (options.idKeys ?? []).map((key) => new Needle(key));
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.calls.size;
  }

  add(id: string, changes: PendingChange[]): void {
    if (changes.length === 0) return;
    const at = this.now();
    this.calls.delete(id); // a repeated id counts from its latest call
    this.calls.set(id, { at, changes });
    this.evict(at);
  }

  has(id: string): boolean {
    return this.calls.has(id);
  }

  take(id: string): PendingChange[] | undefined {
    const call = this.calls.get(id);
    if (call === undefined) return undefined;
    this.calls.delete(id);
    return call.changes;
  }

  /** Does the line name a waiting call under one of the id keys? */
  mentionedIn(line: Buffer): boolean {
    for (const key of this.keys) {
      const length = key.bytes.length;
      for (let at = key.indexIn(line); at !== -1; at = key.indexIn(line, at + length)) {
        const id = stringValueAfter(line, at + length);
        if (id === undefined) continue;
        this.lookups++;
        if (this.calls.has(id)) return true;
      }
    }
    return false;
  }

  confirm(id: string): void {
    for (const change of this.take(id) ?? []) this.emit(outcome(change, true));
  }

  /** End of input: every call still waiting is reported, unconfirmed, in the order it came. */
  flushUnconfirmed(): void {
    for (const { changes } of this.calls.values()) this.reportUnconfirmed(changes);
    this.calls.clear();
  }

  /** The oldest calls first (a Map keeps insertion order): over the count, or too old. */
  private evict(now: number): void {
    for (const [id, call] of this.calls) {
      if (this.calls.size <= MAX_CALLS && now - call.at <= MAX_AGE_MS) return;
      this.calls.delete(id);
      this.reportUnconfirmed(call.changes);
    }
  }

  private reportUnconfirmed(changes: PendingChange[]): void {
    for (const change of changes) this.emit(outcome(change, false));
  }
}
