import { validateProjectPath } from "../server/validate.js";
import { isMassDelete } from "../mass-delete.js";
import type { RemoteFile } from "../sync/api-types.js";

/**
 * What a pull does, decided from plain values (design.md §2b): the remote listing, the base (what
 * this machine last pulled or synced) and the state of the local files the two name. No I/O.
 */

export type LocalState =
  | { kind: "file"; sha256: string }
  | { kind: "missing" }
  /** Never written: a symlink at or above the path, a directory in the way, a special file. */
  | { kind: "blocked"; reason: string };

export interface PathReason {
  path: string;
  reason: string;
}

export interface PullPlan {
  /** Written from the remote (new, stale here, or overwritten with --force). */
  downloads: RemoteFile[];
  /** Already the remote's content. */
  unchanged: string[];
  /** Changed here since the base (or, without a base, different from the remote): kept. */
  conflicts: PathReason[];
  /** With --delete: unchanged here since the base, gone from the remote. */
  deletes: string[];
  /** The deletes not done, without --force: most of the base (a wrong project, a remote emptied). */
  heldDeletes: string[];
  /** Listed paths that are never written: invalid, reserved, duplicated, clashing, blocked here. */
  refusals: PathReason[];
  /** Listed paths left out by --ignore (and node_modules/). */
  ignored: string[];
}

export interface PlanOptions {
  force?: boolean;
  delete?: boolean;
  /** Paths the user's ignore rules leave out. */
  ignored?: (path: string) => boolean;
}

const RESERVED = new Set([".git", ".uspark"]);

/** Why a listed path may never be written, by its name alone; undefined when it may. */
export function pathRefusal(path: string): string | undefined {
  const invalid = validateProjectPath(path);
  if (invalid) return invalid;
  // Case-insensitive: on macOS and Windows `.GIT/config` is `.git/config`.
  const reserved = path.split("/").find((segment) => RESERVED.has(segment.toLowerCase()));
  return reserved ? `it is inside ${reserved}/, which is never written` : undefined;
}

export function planPull(
  remote: readonly RemoteFile[],
  base: ReadonlyMap<string, string> | undefined,
  local: ReadonlyMap<string, LocalState>,
  options: PlanOptions = {},
): PullPlan {
  const plan: PullPlan = { downloads: [], unchanged: [], conflicts: [], deletes: [], heldDeletes: [], refusals: [], ignored: [] };
  const listed = new Set(remote.map((file) => file.path));
  const refused = listingRefusals(remote);
  for (const file of remote) {
    const why = refused.get(file.path);
    if (why !== undefined) {
      plan.refusals.push({ path: file.path, reason: why });
      continue;
    }
    if (options.ignored?.(file.path)) {
      plan.ignored.push(file.path);
      continue;
    }
    const here = local.get(file.path) ?? { kind: "missing" };
    if (here.kind === "blocked") plan.refusals.push({ path: file.path, reason: here.reason });
    else if (here.kind === "missing") plan.downloads.push(file);
    else if (here.sha256 === file.sha256) plan.unchanged.push(file.path);
    else if (base?.get(file.path) === here.sha256 || options.force) plan.downloads.push(file);
    else plan.conflicts.push({ path: file.path, reason: base?.has(file.path) ? "changed here since the last pull or sync" : "differs from the remote, and no earlier pull or sync says which is newer" });
  }
  if (options.delete && base) {
    for (const [path, sha] of base) {
      if (listed.has(path) || pathRefusal(path) || options.ignored?.(path)) continue;
      const here = local.get(path);
      if (here?.kind !== "file") continue;
      if (here.sha256 === sha) plan.deletes.push(path);
      else plan.conflicts.push({ path, reason: "changed here since the last pull or sync, and deleted remotely: kept" });
    }
    if (!options.force && isMassDelete(plan.deletes.length, base.size)) [plan.heldDeletes, plan.deletes] = [plan.deletes, []];
  }
  return plan;
}

/** Per-path refusals of a listing: bad names, the same path twice, a file that is also a directory. */
function listingRefusals(remote: readonly RemoteFile[]): Map<string, string> {
  const refused = new Map<string, string>();
  const count = new Map<string, number>();
  for (const { path } of remote) count.set(path, (count.get(path) ?? 0) + 1);
  for (const [path, n] of count) {
    const why = pathRefusal(path);
    if (why) refused.set(path, why);
    else if (n > 1) refused.set(path, `listed ${n} times`);
  }
  for (const path of count.keys()) {
    if (refused.has(path)) continue;
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join("/");
      if (count.has(dir) && !pathRefusal(dir)) {
        refused.set(path, `${dir} is listed as a file and as a directory`);
        refused.set(dir, `${dir} is listed as a file and as a directory`);
      }
    }
  }
  return refused;
}

/**
 * The base after a pull: the remote's hash for every path now equal to it; the old entry for what
 * was kept (a conflict, a failure, a file the remote deleted that is still here).
 */
export function nextBase(
  remote: readonly RemoteFile[],
  base: ReadonlyMap<string, string> | undefined,
  plan: PullPlan,
  done: { written: ReadonlySet<string>; deleted: ReadonlySet<string> },
): Map<string, string> {
  const next = new Map(base ?? []);
  const refused = new Set(plan.refusals.map((r) => r.path));
  const unchanged = new Set(plan.unchanged);
  for (const file of remote) {
    if (refused.has(file.path)) continue;
    if (done.written.has(file.path) || unchanged.has(file.path)) next.set(file.path, file.sha256);
  }
  for (const path of done.deleted) next.delete(path);
  return next;
}
