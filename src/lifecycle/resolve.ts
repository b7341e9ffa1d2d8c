import type { Resolution } from "../reconcile/plan.js";
import type { Reporter } from "../report/reporter.js";
import { resolvePaths } from "./scope.js";
import { openOrExit, type Workspace } from "./workspace.js";
import { errorText } from "../errors/text.js";

/**
 * `uspark resolve <path> --mine | --theirs | --both` (docs/sync.md, Conflicts): one round of the
 * reconcile on the path that ends its conflict as asked (plan.ts, planResolution): mine committed
 * over the remote's version as it is now, or theirs written here (yours backed up in
 * .uspark/backup/), the conflict copy deleted remotely (every other tree loses it through its
 * pull or two-way watch); or both, yours kept as a file of its own at the copy's path. Exit 0
 * resolved, 1 not (the remote moved again, a failure: said), 2 bad usage or no conflict there.
 */

export interface ResolveOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  root: string;
  prefix?: string;
  ignore?: string[];
  path: string;
  choice: Resolution | undefined;
  cwd?: string;
  requestTimeoutMs: number;
  timeoutMs?: number;
  report: Reporter;
}

const KEPT: Record<Resolution, string> = {
  mine: "yours committed over the remote's",
  theirs: "the remote's version taken here (yours in .uspark/backup/)",
  both: "the remote's version at the path, yours kept as",
};

export async function runResolve(options: ResolveOptions): Promise<0 | 1 | 2> {
  const { report, choice } = options;
  if (choice === undefined) {
    report.error("usage", "say how: --mine (yours wins), --theirs (the remote's wins) or --both (yours kept as a file of its own)");
    return 2;
  }
  const scope = resolvePaths({ ...options, paths: [options.path] });
  if (scope === "usage" || scope === undefined) {
    if (scope === undefined) report.error("usage", "name one file in conflict");
    return 2;
  }
  const path = scope.given[0]!;
  const ws = await openOrExit(
    { ...options, concurrency: 4, maxFileSize: Number.MAX_SAFE_INTEGER, source: { agent: "resolve" } },
    "resolve",
  );
  if (typeof ws === "number") return ws;
  try {
    return await resolveIn(ws, path, choice, report);
  } catch (error) {
    report.error("resolve-failed", `resolve failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

async function resolveIn(ws: Workspace, path: string, choice: Resolution, report: Reporter): Promise<0 | 1 | 2> {
  const open = ws.base.conflict(path);
  const looked = await ws.reconciler.round({ mode: "push", paths: [path], dryRun: true }, ws.signal);
  if (!open && !looked.plan.conflicts.some((c) => c.path === path)) {
    report.error("usage", `no open conflict at ${path} (uspark status lists them)`, { path });
    return 2;
  }
  // Asked once: a path decided again after a 409 (the remote moved meanwhile) stays in conflict.
  let asked = false;
  const resolve = (p: string) => (p === path && !asked ? ((asked = true), choice) : undefined);
  const round = await ws.reconciler.round({ mode: "push", paths: [path], resolve, evidence: new Set([path]) }, ws.signal);
  const copy = open?.copy ?? round.plan.puts.find((p) => p.from === path && p.path !== path)?.path;
  if (choice !== "both" && open?.copy !== undefined && ws.view.get(open.copy)) {
    report.warn("copy-kept", `${open.copy} was changed since it was committed as your conflict copy: kept, remotely and for every tree`, {
      path,
      copy: open.copy,
    });
  }
  const after = await ws.reconciler.round({ mode: "push", paths: [path], dryRun: true }, ws.signal);
  if (!after.plan.settles.some((s) => s.path === path) || ws.base.conflict(path)) {
    report.error(
      "not-resolved",
      `${path} is not resolved: the remote moved meanwhile, or a step failed (see above); uspark status says where it stands`,
      { path },
    );
    return 1;
  }
  report.info("resolved", `resolved ${path}: ${KEPT[choice]}${choice === "both" ? ` ${copy}` : ""}`, { path, choice, copy });
  return 0;
}
