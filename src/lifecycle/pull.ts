import type { RoundRequest, RoundResult } from "../reconcile/reconciler.js";
import { pathRefusal } from "../reconcile/disk-tree.js";
import { RESOLVE_HINT } from "../reconcile/conflict-copy.js";
import { plural, type Reporter } from "../report/reporter.js";
import type { BackoffPolicy } from "../transfer/retry.js";
import { openConflicts, reportHeld, reportPlan, reportRefusedPaths, reportUnsynced } from "../terminal/round-report.js";
import { resolvePaths } from "./scope.js";
import { openOrExit, type Workspace } from "./workspace.js";
import { errorText } from "../errors/text.js";

/**
 * `uspark pull [paths...]` (docs/sync.md#pull): rounds of the reconcile in pull mode. Remote changes
 * are written over local files that did not change since the base (each re-checked right before
 * the write), remote deletes are carried out here (only of paths the base held, through the
 * mass-delete guard), a file changed on both sides keeps both as they are (a pull never commits:
 * the conflict is said and recorded, its copy left to a command that writes, exit 1), and local
 * changes are left alone (a push's
 * business). A listed path that could land outside the root, in .git/ or .uspark/, or through a
 * symlink is refused. Exit code: 0 all pulled, 1 something refused, in conflict or failed, 2 bad usage.
 *
 *   --force     conflicts: theirs wins (the local file kept under .uspark/backup/<time>/ first);
 *               held deletes are carried out
 *   --dry-run   what would be done; nothing written or sent
 *   --delete    accepted for compatibility: deletes follow the table
 */

export interface PullOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  root: string;
  requestTimeoutMs: number;
  concurrency: number;
  report: Reporter;
  ignore?: string[];
  prefix?: string;
  /** Limit the pull to these paths (files or directories), relative to `cwd`. */
  paths?: string[];
  cwd?: string;
  force?: boolean;
  dryRun?: boolean;
  /** Give up when the server has not answered for this long, ms. Default 60000. */
  timeoutMs?: number;
  maxFileSize?: number;
  backoff?: BackoffPolicy;
  /** Create the project if the server does not have it. */
  create?: boolean;
}

/** Rounds for paths that changed here while they were pulled: decided again, a few times at most. */
const MAX_ROUNDS = 3;

export async function runPull(options: PullOptions): Promise<0 | 1 | 2> {
  const { report } = options;
  const prefix = options.prefix?.replace(/\/+$/, "");
  const badPrefix = prefix === undefined ? undefined : pathRefusal(prefix);
  if (badPrefix) {
    report.error("usage", `--prefix ${options.prefix}: ${badPrefix}`);
    return 2;
  }
  const scope = resolvePaths({ ...options, paths: options.paths ?? [] });
  if (scope === "usage") return 2;
  const ws = await openOrExit(
    { ...options, prefix, maxFileSize: options.maxFileSize ?? Number.MAX_SAFE_INTEGER, source: { agent: "pull" } },
    "pull",
  );
  if (typeof ws === "number") return ws;
  try {
    const request: RoundRequest = { mode: "pull", paths: "all", dryRun: options.dryRun, within: scope?.contains };
    if (options.force) request.force = scope?.contains ?? (() => true);
    const result = await ws.reconciler.round(request, ws.signal);
    if (options.dryRun) return dryRun(report, result);
    let requeue = result.requeue;
    for (let round = 1; requeue.length > 0 && round < MAX_ROUNDS; round++) {
      requeue = (await ws.reconciler.round({ ...request, paths: requeue }, ws.signal)).requeue;
    }
    for (const path of requeue) report.warn("pull-kept", `${path} kept: it kept changing here while the pull ran`, { path });
    return summarize(report, ws, result, requeue.length);
  } catch (error) {
    report.error("pull-failed", `pull failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

function dryRun(report: Reporter, result: RoundResult): 0 | 1 {
  reportPlan(report, result.plan, "pull-plan");
  const refused = reportRefusedPaths(report, result);
  const { plan } = result;
  const held = plan.held.local.length;
  if (held > 0)
    report.warn("mass-delete", `${plural(held, "delete")} here would be refused by the mass-delete guard (--force carries them out)`, {
      paths: plan.held.local,
    });
  report.info(
    "summary",
    `dry run: would pull ${plural(plan.writes.length, "file")}, delete ${plan.removes.length} here, ${plural(plan.conflicts.length, "conflict")}; nothing written`,
    {
      writes: plan.writes.length,
      removes: plan.removes.length,
      conflicts: plan.conflicts.length,
      held,
      refused,
    },
  );
  return plan.conflicts.length + held + refused > 0 ? 1 : 0;
}

/** `pulled 812 files, 3 unchanged, 1 conflict`; 1 when anything was refused, kept or failed. */
function summarize(report: Reporter, ws: Workspace, result: RoundResult, kept: number): 0 | 1 {
  const { ledger } = ws.reconciler;
  const refused = reportRefusedPaths(report, result);
  reportHeld(report, result.plan, ws.base.base.files.size, "pull");
  const failed = reportUnsynced(report, ledger, result);
  const conflicts = openConflicts(ledger);
  if (conflicts.length > 0)
    report.error(
      "conflicts",
      `${plural(conflicts.length, "conflict")} open (${conflicts.slice(0, 5).join(", ")}${conflicts.length > 5 ? ", …" : ""}): your versions are kept here, the remote's left as they are; resolve each with ${RESOLVE_HINT}`,
      { paths: conflicts },
    );
  const ignored = result.outOfScope.filter((o) => !o.refused).length;
  const held = result.plan.held.local.length;
  const parts = [`pulled ${plural(ledger.pulled, "file")}`, `${ledger.unchanged} unchanged`];
  if (ignored > 0) parts.push(`${ignored} ignored`);
  if (ledger.removed > 0) parts.push(`${ledger.removed} deleted`);
  if (held > 0) parts.push(`${held} not deleted`);
  if (conflicts.length > 0) parts.push(plural(conflicts.length, "conflict"));
  if (refused > 0) parts.push(`${refused} refused`);
  if (failed + kept > 0) parts.push(`${failed + kept} failed`);
  const left = result.plan.leftAlone.length;
  if (left > 0) parts.push(`${left} changed here (uspark push sends them)`);
  const bad = refused + held + failed + kept + conflicts.length > 0;
  report[bad ? "error" : "info"]("summary", parts.join(", "), {
    pulled: ledger.pulled,
    unchanged: ledger.unchanged,
    deleted: ledger.removed,
    conflicts: conflicts.length,
    refused,
    failed,
    ignored,
    held,
    leftAlone: left,
  });
  return bad ? 1 : 0;
}
