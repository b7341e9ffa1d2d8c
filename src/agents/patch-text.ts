import { moveChanges, pending, type PendingChange } from "./common.js";
import { SkippedString, unescapeJsonString } from "./sparse-json.js";

/**
 * The files a patch in the apply_patch format names in its headers (`*** Add File: path`,
 * `*** Update File: path` with an optional `*** Move to: path`, `*** Delete File: path`), in
 * order: what the patch means to change, for the streams that do not list what it did.
 */
export function patchTextChanges(patchText: string, cause: string): PendingChange[] {
  const changes: PendingChange[] = [];
  let updating: string | undefined;
  for (const raw of patchText.split("\n")) {
    const line = raw.replace(/\r$/, "");
    const header = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line);
    if (header) {
      if (updating !== undefined) changes.push(pending(updating, "write", cause));
      updating = undefined;
      const [, action, path] = header as unknown as [string, string, string];
      if (action === "Update") updating = path.trim();
      else changes.push(pending(path.trim(), action === "Delete" ? "delete" : "write", cause));
      continue;
    }
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move && updating !== undefined) {
      changes.push(...moveChanges(updating, move[1]!.trim(), cause));
      updating = undefined;
    }
  }
  if (updating !== undefined) changes.push(pending(updating, "write", cause));
  return changes;
}

/** A patch's text from an event: a string, or one too long to have been decoded (a SkippedString still valid). */
export function patchTextOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!(value instanceof SkippedString) || value.raw === undefined) return undefined;
  return unescapeJsonString(value.raw, value.raw.length)?.bytes.toString("utf8");
}
