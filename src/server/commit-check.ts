import type { CommitOutcome } from "./store.js";
import type { Change } from "./validate.js";

/**
 * The commit's refusal when a blob it names is missing or has another size, else undefined.
 * Shared by the stores: `sizeOf` looks a blob up.
 */
export async function checkBlobs(
  changes: Change[],
  sizeOf: (sha256: string) => Promise<number | undefined>,
): Promise<CommitOutcome | undefined> {
  const sizes = new Map<string, number | undefined>();
  for (const change of changes) {
    if (change.op !== "put") continue;
    if (!sizes.has(change.sha256)) sizes.set(change.sha256, await sizeOf(change.sha256));
    const actual = sizes.get(change.sha256);
    if (actual !== undefined && actual !== change.size) {
      return { kind: "size_mismatch", path: change.path, size: change.size, actual };
    }
  }
  const missing = [...sizes].filter(([, size]) => size === undefined).map(([sha]) => sha);
  return missing.length > 0 ? { kind: "missing_blobs", missing } : undefined;
}
