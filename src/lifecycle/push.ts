import type { CommitSource } from "../api/types.js";
import { isInside } from "../paths/paths.js";
import { pathRefusal } from "../reconcile/disk-tree.js";
import { RESOLVE_HINT } from "../reconcile/conflict-copy.js";
import type { RoundRequest, RoundResult } from "../reconcile/reconciler.js";
import { plural, pushedFiles, type Reporter } from "../report/reporter.js";
import { entriesFor, readJournal, updateJournal, type JournalEntry } from "../sync/journal.js";
import { pendingTranscripts, sendPendingTranscripts } from "../transcript/pending.js";
import type { BackoffPolicy } from "../transfer/retry.js";
import { openConflicts, reportHeld, reportPlan, reportRefusedPaths, reportUnsynced } from "../terminal/round-report.js";
import { openOrExit, type Workspace } from "./workspace.js";
import { resolvePaths, type PathScope } from "./scope.js";
import { errorText } from "../errors/text.js";

/**
 * `uspark push [paths...]`: one round of the reconcile in push mode (docs/sync.md#the-reconcile). Local changes
 * are committed with their expectation, local deletes too (only of paths the base held, through
 * the mass-delete guard: all or nothing), a file changed on both sides keeps both (a conflict
 * copy, exit 1), and remote changes are left alone (a pull's business).
 *
 *   no paths     the whole tree
 *   paths        those files and directories (relative to the current directory)
 *   --pending    the journal's paths (and unsent transcripts); entries that sync are removed
 *   --force      conflicts: mine wins (committed over the remote's); held deletes are carried out
 *   --dry-run    what would be done; nothing sent
 *   --delete     accepted for compatibility: deletes follow the table, with or without it
 *
 * Exit code: 0 all synced, 1 something not (failed, a conflict, a refused mass delete), 2 bad usage.
 */

export interface PushOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  root: string;
  prefix?: string;
  ignore: string[];
  paths: string[];
  pending: boolean;
  force?: boolean;
  dryRun?: boolean;
  /** Relative `paths` are relative to this; default process.cwd(). */
  cwd?: string;
  requestTimeoutMs: number;
  maxFileSize: number;
  concurrency: number;
  /** Give up when the server has not answered for this long. Default 60000. */
  timeoutMs?: number;
  source: CommitSource;
  report: Reporter;
  backoff?: BackoffPolicy;
  /** Create the project if the server does not have it. */
  create?: boolean;
  /** A server whose history does not extend this tree's: commit this tree's files onto it and take its history. */
  ontoRewound?: boolean;
}

export async function runPush(options: PushOptions): Promise<number> {
  const { report } = options;
  if (options.pending && options.paths.length > 0) {
    report.error("usage", "--pending retries the journal; it takes no paths");
    return 2;
  }
  const scope = resolvePaths(options);
  if (scope === "usage") return 2;
  const ws = await openOrExit(options, "push");
  if (typeof ws === "number") return ws;
  try {
    const journal = options.pending ? await pendingEntries(ws, options) : undefined;
    const pending = journal?.entries;
    const request = pushRequest(options, scope, pending);
    request.onto = ws.rewound;
    const result = await ws.reconciler.round(request, ws.signal);
    if (options.dryRun) return dryRun(report, result);
    if (ws.rewound) return ontoRewound(report, ws, result);
    const unsentTranscripts = options.pending ? await sendTranscripts(ws, options) : 0;
    if (pending) await settleJournal(ws, options, pending);
    return summarize(report, ws, result) || unsentTranscripts + (journal?.refused ?? 0) > 0 ? 1 : 0;
  } catch (error) {
    report.error("push-failed", `push failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

function pushRequest(options: PushOptions, scope: PathScope | undefined, pending: JournalEntry[] | undefined): RoundRequest {
  const request: RoundRequest = { mode: "push", paths: "all", allOrNothing: true, dryRun: options.dryRun };
  if (pending) {
    request.paths = pending.map((e) => e.path);
    request.evidence = new Set(request.paths);
  } else if (scope) {
    request.within = scope.contains;
  }
  if (options.force) request.force = scope ? request.within : () => true;
  return request;
}

/** The journal's entries for this project, but those whose file is not where the tree has its path (said, left in the journal). */
async function pendingEntries(ws: Workspace, options: PushOptions): Promise<{ entries: JournalEntry[]; refused: number }> {
  const entries = entriesFor(await readJournal(ws.root, options.report), options.apiUrl, options.projectId);
  const usable: JournalEntry[] = [];
  for (const e of entries) {
    // The tree is read by project path; an entry whose file is elsewhere was not written by us.
    const refusal =
      pathRefusal(e.path) ??
      (!isInside(ws.root, e.local)
        ? `${e.local} is outside the project root ${ws.root}`
        : e.local !== ws.tree.where(e.path)
          ? `the journal says it is ${e.local}, not ${ws.tree.where(e.path)}`
          : undefined);
    if (refusal) options.report.warn("refused", `pending ${e.path}: ${refusal}; left in the journal`, { path: e.path });
    else usable.push(e);
  }
  return { entries: usable, refused: entries.length - usable.length };
}

/** Journal entries whose path is now synced go; what failed again stays (with its new reason). */
async function settleJournal(ws: Workspace, options: PushOptions, pending: JournalEntry[]): Promise<void> {
  const time = new Date().toISOString();
  const synced = [];
  for (const entry of pending) {
    const outcome = ws.reconciler.ledger.outcomes.get(entry.path);
    if (outcome?.status === "synced")
      synced.push({ apiUrl: options.apiUrl, projectId: options.projectId, path: entry.path, at: Date.parse(time) });
  }
  await updateJournal(ws.root, { synced }, options.report);
}

async function sendTranscripts(ws: Workspace, options: PushOptions): Promise<number> {
  const spools = await pendingTranscripts({ ...options, root: ws.root });
  if (spools.length === 0) return 0;
  return sendPendingTranscripts(spools, { ...options, root: ws.root, timeoutMs: options.timeoutMs ?? 60_000 });
}

function dryRun(report: Reporter, result: RoundResult): 0 | 1 {
  reportPlan(report, result.plan, "push-plan");
  const { plan } = result;
  const held = plan.held.remote.length;
  if (held > 0)
    report.warn("mass-delete", `${plural(held, "delete")} would be refused by the mass-delete guard (--force carries them out)`, {
      paths: plan.held.remote,
    });
  report.info(
    "summary",
    `dry run: would push ${plural(plan.puts.length, "file")}, delete ${plan.deletes.length}, ${plural(plan.conflicts.length, "conflict")}; nothing sent`,
    {
      puts: plan.puts.length,
      deletes: plan.deletes.length,
      conflicts: plan.conflicts.length,
      held,
    },
  );
  return plan.conflicts.length + held + result.unrepresentable.length > 0 ? 1 : 0;
}

/**
 * After a push onto a rewound server: its history is taken (the base's version and chain hash are
 * the server's now) only when every file of this tree made it; else the next command refuses the
 * server again, and this push can be run again.
 */
function ontoRewound(report: Reporter, ws: Workspace, result: RoundResult): 0 | 1 {
  const bad = summarize(report, ws, result);
  if (bad) {
    report.error(
      "rewound",
      "not everything was committed onto the rewound server: its history is not taken yet; run uspark push --onto-rewound again",
    );
    return 1;
  }
  ws.base.accept(ws.view.version, ws.view.chain);
  report.info(
    "rewound",
    `this tree's files are committed onto the server's history at v${ws.view.version}; it is the history synced from now on`,
    { version: ws.view.version },
  );
  return 0;
}

/** The summary line; returns whether anything is not synced. */
function summarize(report: Reporter, ws: Workspace, result: RoundResult): boolean {
  const { ledger } = ws.reconciler;
  reportHeld(report, result.plan, ws.base.base.files.size, "push");
  if (result.refused) report.error("mass-delete", "nothing was committed: a push is all or nothing when the mass-delete guard refuses");
  const unsynced = reportUnsynced(report, ledger, result) + reportRefusedPaths(report, result, "push");
  const conflicts = openConflicts(ledger);
  if (conflicts.length > 0)
    report.error(
      "conflicts",
      `${plural(conflicts.length, "conflict")} open (${conflicts.slice(0, 5).join(", ")}${conflicts.length > 5 ? ", …" : ""}): resolve each with ${RESOLVE_HINT}`,
      { paths: conflicts },
    );
  const parts = [`${pushedFiles(ledger.pushed, ledger.copies)} in ${plural(ledger.commits, "commit")}`];
  if (ledger.deleted > 0) parts.push(`${ledger.deleted} deleted`);
  parts.push(`${ledger.unchanged} unchanged`);
  const left = result.plan.leftAlone.length;
  if (left > 0) parts.push(`${left} changed remotely (uspark pull takes them)`);
  const bad = unsynced + conflicts.length + result.plan.held.remote.length > 0 || result.refused;
  if (unsynced > 0) parts.push(`${unsynced} not synced`);
  report[bad ? "error" : "info"]("summary", `push: ${parts.join(", ")}`, {
    pushed: ledger.pushed,
    copies: ledger.copies,
    commits: ledger.commits,
    deleted: ledger.deleted,
    unchanged: ledger.unchanged,
    conflicts: conflicts.length,
    unsynced,
    leftAlone: left,
  });
  return bad;
}
