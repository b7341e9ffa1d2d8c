// Pure decisions about a commit, shared by the stores (and by the sync engine's simulation): no I/O.

import { createHash } from "node:crypto";
import type { Change, CommitRequest, ConflictEntry } from "../api/types.js";
import { ancestorsOf } from "../api/validate.js";
import type { CommitOutcome } from "./store.js";

/** What a path holds now (absent paths are not in the map). */
export type CurrentFiles = ReadonlyMap<string, { sha256: string; size: number }>;

/** The blobs a commit's puts name, each once. */
export function blobsNamed(changes: readonly Change[]): string[] {
  return [...new Set(changes.flatMap((change) => (change.op === "put" ? [change.sha256] : [])))];
}

/** The paths whose changes carry an `expect`, each once. */
export function pathsExpected(changes: readonly Change[]): string[] {
  return [...new Set(changes.flatMap((change) => (change.expect === undefined ? [] : [change.path])))];
}

/**
 * Every path whose expectation fails against `current` (the state before the commit), once, in
 * the order of the changes, with what it holds now. An `expect` of null requires the path to be
 * absent; a hash requires the path to hold it. Changes without `expect` require nothing.
 */
export function checkExpectations(changes: readonly Change[], current: CurrentFiles): ConflictEntry[] {
  const conflicts = new Map<string, ConflictEntry>();
  for (const change of changes) {
    if (change.expect === undefined || conflicts.has(change.path)) continue;
    const now = current.get(change.path);
    if ((now?.sha256 ?? null) === change.expect) continue;
    conflicts.set(change.path, { path: change.path, sha256: now?.sha256 ?? null, size: now?.size ?? null });
  }
  return [...conflicts.values()];
}

/** The paths a commit puts, each once. */
export function pathsPut(changes: readonly Change[]): string[] {
  return [...new Set(changes.flatMap((change) => (change.op === "put" ? [change.path] : [])))];
}

/** The paths whose current state checkCommit needs: those expected, those put, and their ancestors. */
export function pathsToCheck(changes: readonly Change[]): string[] {
  const puts = pathsPut(changes);
  return [...new Set([...pathsExpected(changes), ...puts, ...puts.flatMap(ancestorsOf)])];
}

/** Of `dirs`, those with files under them in `current` (a map of every file), with those files: checkCommit's `under`. */
export function filesUnder(current: CurrentFiles, dirs: readonly string[]): Map<string, string[]> {
  const wanted = new Set(dirs);
  const under = new Map<string, string[]>();
  for (const path of current.keys()) {
    for (const dir of ancestorsOf(path)) if (wanted.has(dir)) listAdd(under, dir, path);
  }
  return under;
}

/** Adds `item` to the list at `key` in place (a copy per item made a directory of n files cost n²). */
export function listAdd<K, V>(lists: Map<K, V[]>, key: K, item: V): void {
  const list = lists.get(key);
  if (list) list.push(item);
  else lists.set(key, [item]);
}

/**
 * The puts that would leave a path both a file and a directory (docs/api.md, v1.3), one entry each
 * with the other path of the clash: a file above it, or a file under it, after the commit. `under`
 * lists the files under each put path now (at least one more than the commit deletes there, when
 * there are that many); `current` holds at least the put paths and their ancestors.
 */
export function fileDirClashes(
  changes: readonly Change[],
  current: CurrentFiles,
  under: ReadonlyMap<string, readonly string[]>,
): ConflictEntry[] {
  const last = new Map(changes.map((change) => [change.path, change]));
  const isFileAfter = (path: string) => (last.has(path) ? last.get(path)!.op === "put" : current.has(path));
  const putUnder = new Map<string, string>();
  for (const [path, change] of last) if (change.op === "put") for (const dir of ancestorsOf(path)) putUnder.set(dir, path);
  const clashes: ConflictEntry[] = [];
  for (const [path, change] of last) {
    if (change.op !== "put") continue;
    const other =
      ancestorsOf(path).find(isFileAfter) ?? putUnder.get(path) ?? under.get(path)?.find((file) => last.get(file)?.op !== "delete");
    if (other === undefined) continue;
    const now = current.get(path);
    clashes.push({ path, sha256: now?.sha256 ?? null, size: now?.size ?? null, clash: other });
  }
  return clashes;
}

/**
 * The commit's refusal, or undefined when it may be applied, in the order of docs/api.md: a put
 * whose size differs from its blob's (400), failed expectations and file/directory clashes (409),
 * missing blobs (422). `sizes` holds the stored sizes of the blobs named (see blobsNamed),
 * `current` at least the paths of pathsToCheck, `under` what fileDirClashes needs, `version` the
 * project's head.
 */
export function checkCommit(
  changes: readonly Change[],
  stored: { sizes: ReadonlyMap<string, number>; current: CurrentFiles; under: ReadonlyMap<string, readonly string[]>; version: number },
): CommitOutcome | undefined {
  for (const change of changes) {
    if (change.op !== "put") continue;
    const actual = stored.sizes.get(change.sha256);
    if (actual !== undefined && actual !== change.size) {
      return { kind: "size_mismatch", path: change.path, size: change.size, actual };
    }
  }
  const conflicts = checkExpectations(changes, stored.current);
  const failed = new Set(conflicts.map((c) => c.path));
  conflicts.push(...fileDirClashes(changes, stored.current, stored.under).filter((c) => !failed.has(c.path)));
  if (conflicts.length > 0) return { kind: "conflict", conflicts, version: stored.version };
  const missing = blobsNamed(changes).filter((sha256) => !stored.sizes.has(sha256));
  return missing.length > 0 ? { kind: "missing_blobs", missing } : undefined;
}

/**
 * A digest of the parsed request that is equal for "the same body" (docs/api.md: the same JSON
 * with keys sorted): what an Idempotency-Key is bound to.
 */
export function requestFingerprint(request: CommitRequest): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

/** JSON with the keys of every object sorted; undefined members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const members = Object.keys(value)
    .sort()
    .flatMap((key) => {
      const member = (value as Record<string, unknown>)[key];
      return member === undefined ? [] : [`${JSON.stringify(key)}:${canonicalJson(member)}`];
    });
  return `{${members.join(",")}}`;
}

/** Whether a change of the commit is at `path` or under it (GET /commits?path=P). */
export function touchesPath(changes: readonly Change[], path: string): boolean {
  return changes.some((change) => change.path === path || change.path.startsWith(`${path}/`));
}
