// Whether each change of a commit added, modified or deleted its path, told from what the project
// held before it: the commit list and the commit page show A, M or D, as a code host does.

import type { Change } from "../../api/types.js";

export type ChangeStatus = "A" | "M" | "D";

export const STATUS_WORDS: Readonly<Record<ChangeStatus, string>> = { A: "added", M: "modified", D: "deleted" };

export function changeStatus(change: Change, heldBefore: boolean): ChangeStatus {
  if (change.op === "delete") return "D";
  return heldBefore ? "M" : "A";
}

/** A change with its status and the content its path held before (undefined: none). */
export interface ChangeFacts {
  status: ChangeStatus;
  oldHash: string | undefined;
}

/**
 * The facts of every change of `commits` (oldest first, consecutive) from the hashes of the paths
 * held before the first of them (only the paths they touch are needed): each commit moves them on.
 */
export function changeFacts(before: ReadonlyMap<string, string>, commits: readonly { changes: readonly Change[] }[]): ChangeFacts[][] {
  const held = new Map(before);
  return commits.map((commit) =>
    commit.changes.map((change) => {
      const oldHash = held.get(change.path);
      const facts = { status: changeStatus(change, oldHash !== undefined), oldHash };
      if (change.op === "delete") held.delete(change.path);
      else held.set(change.path, change.sha256);
      return facts;
    }),
  );
}
