import { randomUUID } from "node:crypto";
import type { Change, RemoteFile } from "../api/types.js";
import type { RemoteEntry } from "../reconcile/plan.js";
import { ApiError } from "../transfer/client.js";
import { plural, type Reporter } from "../report/reporter.js";
import { openConflicts, reportUnsynced } from "../terminal/round-report.js";
import { filesAt, projectPath, withHistory, type HistoryOptions } from "./history.js";
import type { Workspace } from "./workspace.js";

/**
 * `uspark restore <path…> --at N` (docs/commands.md#status-diff-and-history): the content those
 * paths (files, or directories: everything under them) had at version N is committed back as a new
 * commit, each change on condition that the remote still holds what it holds now (a writer in
 * between: nothing applied, exit 1). Then the restored paths are pulled here through the
 * reconcile's checked writes; a local edit of one is kept under .uspark/backup/<time>/ first.
 * Exit 0 restored, 1 not (or not written here), 2 bad usage.
 */

export async function runRestore(options: HistoryOptions & { paths: string[]; at: number }): Promise<number> {
  const given: string[] = [];
  for (const arg of options.paths) {
    const path = projectPath(options, arg);
    if (path === undefined) return 2;
    given.push(path);
  }
  return withHistory(options, "restore", (ws) => restoreIn(ws, given, options), true);
}

/** What a restore uses of a workspace (the simulation gives its own, test/reconcile/sim/writer.ts). */
export type RestoreParts = Pick<Workspace, "view" | "remote" | "reconciler" | "signal">;

/** The restore of the project paths `given` as at version `at` in an open workspace: its exit code. */
export async function restoreIn(ws: RestoreParts, given: readonly string[], options: { at: number; report: Reporter }): Promise<number> {
  const within = (p: string) => given.some((g) => p === g || p.startsWith(g + "/"));
  const then = new Map((await filesAt(ws, options.at)).filter((f) => within(f.path)).map((f) => [f.path, f]));
  const changes = restoringChanges(then, (p) => ws.view.get(p), [...ws.view.files.keys()].filter(within));
  if (changes.length === 0) {
    options.report.info("summary", `nothing to restore: ${given.join(", ")} already as at version ${options.at}`, { at: options.at });
    return then.size === 0 && ![...ws.view.files.keys()].some(within) ? notFound(options, given) : 0;
  }
  const version = await commitRestore(ws, changes, options);
  if (version === undefined) return 1;
  options.report.info("restore", `restored ${plural(changes.length, "path")} as at version ${options.at} in version ${version}`, {
    at: options.at,
    version,
    paths: changes.map((c) => c.path),
  });
  return writeHere(
    ws,
    changes.map((c) => c.path),
    options,
  );
}

/** The changes that make `now` (the paths under the given ones) what it was `then`; each expects what is there now. */
export function restoringChanges(
  then: ReadonlyMap<string, RemoteFile>,
  now: (path: string) => RemoteEntry | null,
  nowPaths: readonly string[],
): Change[] {
  const changes: Change[] = [];
  for (const path of new Set([...then.keys(), ...nowPaths])) {
    const old = then.get(path);
    const current = now(path);
    if (old?.sha256 === current?.sha256) continue;
    const expect = current?.sha256 ?? null;
    changes.push(old ? { op: "put", path, sha256: old.sha256, size: old.size, expect } : { op: "delete", path, expect });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : 1));
}

function notFound(options: { report: Reporter }, given: readonly string[]): number {
  options.report.error("not-found", `${given.join(", ")}: not in the project, then or now`, { paths: given });
  return 1;
}

/** The commit's version; undefined after a refusal was said (someone committed in between, a blob the server lost). */
async function commitRestore(ws: RestoreParts, changes: Change[], options: { report: Reporter }): Promise<number | undefined> {
  try {
    return (await ws.remote.commit(changes, { agent: "restore" }, randomUUID(), ws.signal)).version;
  } catch (error) {
    if (!(error instanceof ApiError) || (error.code !== "conflict" && error.code !== "missing_blobs")) throw error;
    const why =
      error.code === "conflict"
        ? "the remote changed in the meantime; nothing was applied: run it again"
        : "the server no longer has the content of that version; nothing was applied";
    options.report.error("restore", `restore refused: ${why}`, { code: error.code });
    return undefined;
  }
}

/** The restored paths, pulled here: theirs wins, a local edit kept under .uspark/backup/ first. */
async function writeHere(ws: RestoreParts, paths: string[], options: { report: Reporter }): Promise<number> {
  await ws.view.refresh(ws.signal);
  const restored = new Set(paths);
  const result = await ws.reconciler.round({ mode: "pull", paths, force: (p) => restored.has(p) }, ws.signal);
  const failed =
    reportUnsynced(options.report, ws.reconciler.ledger, result) + openConflicts(ws.reconciler.ledger).length + result.outOfScope.length;
  if (failed > 0) options.report.error("restore", "restored remotely, but not all of it here: uspark pull takes it from there", { failed });
  return failed > 0 ? 1 : 0;
}
