import { isObject, SkippedString } from "./sparse-json.js";
import type { ChangeSink, FileChange } from "./types.js";

/** A FileChange, without a `cwd` key when the agent did not tell us its directory. */
export function fileChange(
  path: string,
  kind: FileChange["kind"],
  cause: string,
  confirmed: boolean,
  cwd?: string,
): FileChange {
  return cwd === undefined ? { path, kind, cause, confirmed } : { path, kind, cause, confirmed, cwd };
}

/** A field's value when it is a non-empty string (a SkippedString or anything else is not). */
export function stringField(object: unknown, ...keys: string[]): string | undefined {
  if (!isObject(object)) return undefined;
  for (const key of keys) {
    const value = object[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** The bytes of `"text"`, quotes included: what a JSON line holds for that string value or key. */
export function needle(text: string): Buffer {
  return Buffer.from(JSON.stringify(text));
}

export function includesAny(line: Buffer, needles: readonly Buffer[]): boolean {
  for (const n of needles) if (line.includes(n)) return true;
  return false;
}

/** The changes one tool call will make, waiting for the call's result. */
export type PendingChange = Omit<FileChange, "confirmed">;

/**
 * Tool calls whose result has not come yet, by call id. A line that answers a call must
 * contain its id, so `mentionedIn` lets a parser skip every other result line unparsed.
 */
export class PendingCalls {
  private readonly calls = new Map<string, { id: Buffer; changes: PendingChange[] }>();

  get size(): number {
    return this.calls.size;
  }

  add(id: string, changes: PendingChange[]): void {
    if (changes.length === 0) return;
    this.calls.delete(id); // a repeated id counts from its latest call
    this.calls.set(id, { id: Buffer.from(id), changes });
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

  mentionedIn(line: Buffer): boolean {
    for (const call of this.calls.values()) if (line.includes(call.id)) return true;
    return false;
  }

  confirm(id: string, emit: ChangeSink): void {
    for (const change of this.take(id) ?? []) emit({ ...change, confirmed: true });
  }

  /** End of input: every call still waiting is reported, unconfirmed, in the order it came. */
  flushUnconfirmed(emit: ChangeSink): void {
    for (const { changes } of this.calls.values()) {
      for (const change of changes) emit({ ...change, confirmed: false });
    }
    this.calls.clear();
  }
}

/** The changes of a rename: the old path is gone, the new one written. */
export function moveChanges(from: string, to: string, cause: string, cwd?: string): PendingChange[] {
  return [pending(from, "delete", cause, cwd), pending(to, "write", cause, cwd)];
}

export function pending(path: string, kind: FileChange["kind"], cause: string, cwd?: string): PendingChange {
  return cwd === undefined ? { path, kind, cause } : { path, kind, cause, cwd };
}

/** Does a string (or a long one that was skipped) start with one of these ASCII prefixes? */
export function startsWithAny(value: unknown, prefixes: readonly string[]): boolean {
  let head: string;
  if (typeof value === "string") head = value.trimStart();
  else if (value instanceof SkippedString && value.raw !== undefined) head = value.raw.toString("latin1", 0, 256).trimStart();
  else return false;
  return prefixes.some((prefix) => head.startsWith(prefix));
}
