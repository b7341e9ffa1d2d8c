import { realpath } from "node:fs/promises";
import path from "node:path";
import { MASS_DELETE_TEXT } from "../mass-delete.js";
import { IgnoreEngine } from "../ignore/engine.js";
import type { Reporter } from "../report.js";
import { loadBase, saveBase } from "../sync/base.js";
import { ApiClient } from "../sync/client.js";
import { DEFAULT_IDLE_TIMEOUT_MS, idleDeadline, type IdleDeadline } from "../sync/deadline.js";
import { RetryingCaller, type BackoffPolicy } from "../sync/retry.js";
import { Transfer } from "../sync/transfer.js";
import { snapshotLocal, type LocalEntry } from "./local.js";
import { nextBase, pathRefusal, planPull, type PathReason, type PullPlan } from "./plan.js";
import { ProgressLine } from "./progress.js";
import { LocalChanged, removeUnchanged, syncDirectories, writeAtomic, WriteRefused } from "./write.js";

/**
 * `uspark pull` (design.md §2b): the remote project onto the disk under --root. Only files whose
 * local content differs from the remote are downloaded; a file changed here since the base is a
 * conflict and kept (unless --force); a listed path that could land outside the root, in .git/ or
 * .uspark/, or through a symlink is refused. Exit code: 0 all pulled, 1 something refused, kept
 * or failed, 2 bad usage.
 */

export interface PullOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  /** The project root (made real here). */
  root: string;
  requestTimeoutMs: number;
  /** Requests in flight. */
  concurrency: number;
  report: Reporter;
  ignore?: string[];
  /** Pull only into <root>/<prefix>. */
  prefix?: string;
  force?: boolean;
  delete?: boolean;
  dryRun?: boolean;
  /** Give up when the server has not answered for this long, ms. Default 60000. */
  giveUpAfterMs?: number;
  backoff?: BackoffPolicy;
}

interface Outcome {
  written: Set<string>;
  deleted: Set<string>;
  kept: PathReason[];
  failed: PathReason[];
}

export async function runPull(options: PullOptions): Promise<0 | 1 | 2> {
  const { report } = options;
  const prefix = options.prefix?.replace(/\/+$/, "");
  const badPrefix = prefix === undefined ? undefined : pathRefusal(prefix);
  if (badPrefix) {
    report.error("usage", `--prefix ${options.prefix}: ${badPrefix}`);
    return 2;
  }
  // The API URL has been through checkApiUrl (config.ts), which refuses every URL this throws on.
  const client = new ApiClient({ ...options, connections: options.concurrency + 1, report });
  const session = new PullSession(client, options);
  try {
    const root = await realpath(options.root);
    const ignored = ignoreRule(root, options.ignore ?? [], prefix);
    const dir = prefix ? path.join(root, ...prefix.split("/")) : root;
    const listing = await session.call(() => client.listFiles(session.signal));
    const base = await loadBase(root, options.apiUrl, options.projectId, report);
    const named = [...listing.files.map((f) => f.path), ...(base?.files.keys() ?? [])].filter((p) => !pathRefusal(p));
    const local = await snapshotLocal(root, dir, named);
    const plan = planPull(listing.files, base?.files, local, { force: options.force, delete: options.delete, ignored });
    for (const { path: p, reason } of plan.refusals) report.warn("pull-refused", `refused ${JSON.stringify(p)}: ${reason}; not written`, { path: p, reason });
    for (const { path: p, reason } of plan.conflicts) report.warn("pull-conflict", `conflict ${p}: ${reason} (use --force to overwrite)`, { path: p, reason });
    if (plan.heldDeletes.length > 0) reportHeldDeletes(report, plan, base?.files.size ?? 0);
    if (options.dryRun) return dryRun(report, plan);

    const outcome = await apply(root, dir, plan, local, session, report);
    await saveBase(root, options.apiUrl, options.projectId, {
      version: listing.version,
      files: nextBase(listing.files, base?.files, plan, outcome),
    });
    return summarize(report, plan, outcome);
  } catch (error) {
    report.error("pull-failed", `pull failed: ${(error as Error).message}`);
    return 1;
  } finally {
    session.end();
    await client.close();
  }
}

/** Downloads and writes, then deletes; nothing here throws for one file. */
async function apply(root: string, dir: string, plan: PullPlan, local: Map<string, LocalEntry>, session: PullSession, report: Reporter): Promise<Outcome> {
  const outcome: Outcome = { written: new Set(), deleted: new Set(), kept: [], failed: [] };
  const localPath = (rel: string) => path.join(dir, ...rel.split("/"));
  const bySha = new Map<string, string[]>();
  for (const file of plan.downloads) bySha.set(file.sha256, [...(bySha.get(file.sha256) ?? []), file.path]);
  const progress = new ProgressLine(report);
  const total = plan.downloads.length;
  const failures = await session.transfer.downloadBlobs(
    plan.downloads,
    async (sha, bytes) => {
      for (const rel of bySha.get(sha) ?? []) {
        const here = local.get(rel);
        const expected = here?.kind === "file" && here.stat ? here.stat : "missing";
        try {
          await writeAtomic(root, localPath(rel), bytes, expected);
          outcome.written.add(rel);
          report.debug("pulled", `pulled ${rel}`, { path: rel });
        } catch (error) {
          note(outcome, report, rel, error);
        }
        progress.update(outcome.written.size + outcome.kept.length + outcome.failed.length, total, "pulling");
      }
    },
    session.signal,
  );
  progress.clear();
  for (const [sha, reason] of failures) {
    for (const rel of bySha.get(sha) ?? []) note(outcome, report, rel, new Error(reason));
  }
  for (const rel of plan.deletes) {
    const here = local.get(rel);
    if (here?.kind !== "file" || !here.stat) continue;
    try {
      await removeUnchanged(localPath(rel), here.stat);
      outcome.deleted.add(rel);
      report.debug("pull-deleted", `deleted ${rel} (the remote no longer has it)`, { path: rel });
    } catch (error) {
      note(outcome, report, rel, error);
    }
  }
  await syncDirectories([...outcome.written, ...outcome.deleted].map((rel) => path.dirname(localPath(rel))));
  return outcome;
}

function note(outcome: Outcome, report: Reporter, rel: string, error: unknown): void {
  const reason = (error as Error).message;
  if (error instanceof LocalChanged) {
    outcome.kept.push({ path: rel, reason });
    report.warn("pull-conflict", `conflict ${rel}: ${reason}`, { path: rel, reason });
    return;
  }
  outcome.failed.push({ path: rel, reason });
  const what = error instanceof WriteRefused ? "refused" : "not pulled";
  report.warn(error instanceof WriteRefused ? "pull-refused" : "pull-failed", `${what} ${JSON.stringify(rel)}: ${reason}`, { path: rel, reason });
}

function dryRun(report: Reporter, plan: PullPlan): 0 | 1 {
  for (const file of plan.downloads) report.info("pull-plan", `would pull ${file.path}`, { path: file.path, op: "pull" });
  for (const rel of plan.deletes) report.info("pull-plan", `would delete ${rel}`, { path: rel, op: "delete" });
  const line = `dry run: would pull ${count(plan.downloads.length, "file")}, ${plan.unchanged.length} unchanged` + ignoredPart(plan) + tail(plan.deletes.length, plan.conflicts.length, plan.refusals.length, 0, plan.heldDeletes.length);
  report.info("summary", line, counts(plan));
  return plan.conflicts.length + plan.refusals.length + plan.heldDeletes.length > 0 ? 1 : 0;
}

/** `pulled 812 files, 3 unchanged, 1 conflict`. */
function summarize(report: Reporter, plan: PullPlan, outcome: Outcome): 0 | 1 {
  const conflicts = plan.conflicts.length + outcome.kept.length;
  const line = `pulled ${count(outcome.written.size, "file")}, ${plan.unchanged.length} unchanged` + ignoredPart(plan) + tail(outcome.deleted.size, conflicts, plan.refusals.length, outcome.failed.length, plan.heldDeletes.length);
  const fields = { ...counts(plan), pulled: outcome.written.size, deleted: outcome.deleted.size, conflicts, failed: outcome.failed.length };
  const bad = conflicts + plan.refusals.length + outcome.failed.length + plan.heldDeletes.length > 0;
  if (bad) report.error("summary", line, fields);
  else report.info("summary", line, fields);
  return bad ? 1 : 0;
}

/** A remote that suddenly lacks most of what was pulled is far more often a mistake than an intent. */
function reportHeldDeletes(report: Reporter, plan: PullPlan, baseFiles: number): void {
  const n = plan.heldDeletes.length;
  report.error(
    "mass-delete",
    `the remote no longer has ${n} of the ${baseFiles} files last pulled or synced here: not deleting them ` +
      `(more than ${MASS_DELETE_TEXT}; a wrong --project-id or --prefix, or a remote that was emptied?). If they are meant to go: --delete --force`,
    { deletes: n, base: baseFiles },
  );
}

function ignoredPart(plan: PullPlan): string {
  return plan.ignored.length > 0 ? `, ${plan.ignored.length} ignored` : "";
}

function tail(deleted: number, conflicts: number, refused: number, failed: number, notDeleted: number): string {
  const parts = [];
  if (deleted > 0) parts.push(`${deleted} deleted`);
  if (notDeleted > 0) parts.push(`${notDeleted} not deleted`);
  if (conflicts > 0) parts.push(count(conflicts, "conflict"));
  if (refused > 0) parts.push(`${refused} refused`);
  if (failed > 0) parts.push(`${failed} failed`);
  return parts.map((p) => `, ${p}`).join("");
}

function counts(plan: PullPlan) {
  return { downloads: plan.downloads.length, unchanged: plan.unchanged.length, deletes: plan.deletes.length, heldDeletes: plan.heldDeletes.length, conflicts: plan.conflicts.length, refusals: plan.refusals.length, ignored: plan.ignored.length };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * The one ignore decision, as watch and push make it, on the local path: what they would never
 * push is never written (the built-ins, --ignore relative to the root, the .gitignore files here).
 */
function ignoreRule(root: string, patterns: readonly string[], prefix: string | undefined): (rel: string) => boolean {
  const engine = new IgnoreEngine({ root, ignore: patterns });
  return (rel) => engine.check(prefix ? `${prefix}/${rel}` : rel, false) !== undefined;
}

/**
 * The requests of one pull: retried by the session's policy, given up when the server has not
 * answered for `giveUpAfterMs` (a large download within its own deadline counts as an answer).
 */
class PullSession {
  readonly transfer: Transfer;
  private readonly controller = new AbortController();
  private readonly deadline: IdleDeadline;
  private readonly caller: RetryingCaller;

  constructor(client: ApiClient, options: PullOptions) {
    const timeoutMs = options.giveUpAfterMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.deadline = idleDeadline({
      timeoutMs,
      longTransferDeadline: () => client.longTransferDeadline(),
      expire: () => this.controller.abort(new Error(`the server has not answered for ${timeoutMs} ms`)),
    });
    this.caller = new RetryingCaller({ report: options.report, policy: options.backoff, onProgress: () => this.deadline.progress() });
    this.transfer = new Transfer(client, { concurrency: options.concurrency, report: options.report, call: (run, signal) => this.caller.call(run, signal) });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  call<T>(run: () => Promise<T>): Promise<T> {
    return this.caller.call(run, this.signal);
  }

  end(): void {
    this.deadline.stop();
  }
}
