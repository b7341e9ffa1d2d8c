import { isObject, SkippedString } from "./sparse-json.js";
import type { FileChange } from "./types.js";
import type { PendingChange } from "./pending-calls.js";

export { needle, Needle } from "./needle.js";
export { outcome, PendingCalls, type PendingChange } from "./pending-calls.js";

/** A FileChange, without a `cwd` key when the agent did not tell us its directory. */
export function fileChange(path: string, kind: FileChange["kind"], cause: string, confirmed: boolean, cwd?: string): FileChange {
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

export function includesAny(line: Buffer, needles: readonly Buffer[]): boolean {
  for (const n of needles) if (line.includes(n)) return true;
  return false;
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
