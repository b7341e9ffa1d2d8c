import type { CommitOutcome } from "./store.js";
import type { Change } from "./validate.js";

/** The blobs a commit's puts name, each once. */
export function blobsNamed(changes: readonly Change[]): string[] {
  return [...new Set(changes.flatMap((change) => (change.op === "put" ? [change.sha256] : [])))];
}

/**
 * The commit's refusal when a blob it names is missing or has another size, else undefined.
 * Shared by the stores: `sizes` holds the stored sizes of the blobs named (see blobsNamed).
 */
export function checkBlobs(changes: readonly Change[], sizes: ReadonlyMap<string, number>): CommitOutcome | undefined {
  for (const change of changes) {
    if (change.op !== "put") continue;
    const actual = sizes.get(change.sha256);
    if (actual !== undefined && actual !== change.size) {
      return { kind: "size_mismatch", path: change.path, size: change.size, actual };
    }
  }
  const missing = blobsNamed(changes).filter((sha256) => !sizes.has(sha256));
  return missing.length > 0 ? { kind: "missing_blobs", missing } : undefined;
}
