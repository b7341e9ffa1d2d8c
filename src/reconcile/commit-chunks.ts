import { emptyPlan, type Plan, type Put, type RemoteDelete } from "./plan.js";

/**
 * A large plan's commit goes in parts, each acknowledged before the next. A part is bounded by
 * changes and by the bytes of its JSON body: the server takes at most 10 MiB of JSON a request
 * (docs/server.md), and its paths may be long. A first push of 50,000 files made 50 commits of
 * 1,000 (each an intent written and synced, a commit, a save): now 5 of 10,000.
 */
export const MAX_COMMIT_CHANGES = 10_000;
/** Of the server's 10 MiB: room for the rest of the body, and for what the estimate misses. */
export const MAX_COMMIT_BYTES = 4 * 1024 * 1024;
/** A change's JSON but its path: op, sha256, size, expect (a hash) and the punctuation. */
const CHANGE_BYTES = 200;

/** A change's share of the commit body, about: the fixed part and the path as JSON (escapes included). */
export function changeBytes(path: string): number {
  return CHANGE_BYTES + Buffer.byteLength(JSON.stringify(path));
}

/**
 * Pure: where the parts end, given each change's bytes in order: a part closes before the change
 * that would take it past `maxChanges` or `maxBytes` (a change alone past `maxBytes` still goes,
 * alone: the server says whether it takes it). The ends are exclusive indexes.
 */
export function chunkEnds(bytes: readonly number[], maxChanges = MAX_COMMIT_CHANGES, maxBytes = MAX_COMMIT_BYTES): number[] {
  const ends: number[] = [];
  let count = 0;
  let sum = 0;
  bytes.forEach((size, i) => {
    if (count > 0 && (count >= maxChanges || sum + size > maxBytes)) {
      ends.push(i);
      count = 0;
      sum = 0;
    }
    count++;
    sum += size;
  });
  if (count > 0) ends.push(bytes.length);
  return ends;
}

type Item = { put: Put } | { copy: Put } | { del: RemoteDelete };

/** The plan's commit in parts (the plan itself when it fits in one). */
export function commitChunks(planned: Plan): Plan[] {
  const items: Item[] = [
    ...planned.puts.map((put) => ({ put })),
    ...planned.copies.map((copy) => ({ copy })),
    ...planned.deletes.map((del) => ({ del })),
  ];
  const ends = chunkEnds(items.map((item) => changeBytes("put" in item ? item.put.path : "copy" in item ? item.copy.path : item.del.path)));
  if (ends.length <= 1) return [planned];
  let start = 0;
  return ends.map((end) => {
    const part = { ...emptyPlan(), conflicts: planned.conflicts };
    for (const item of items.slice(start, end)) {
      if ("put" in item) part.puts.push(item.put);
      else if ("copy" in item) part.copies.push(item.copy);
      else part.deletes.push(item.del);
    }
    start = end;
    return part;
  });
}
