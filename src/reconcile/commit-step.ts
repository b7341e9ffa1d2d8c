import { randomUUID } from "node:crypto";
import { conflictEntries } from "../api/answers.js";
import type { Change, CommitSource, ConflictEntry } from "../api/types.js";
import type { Reporter } from "../report/reporter.js";
import { mapLimit } from "../util/map-limit.js";
import { ApiError } from "../transfer/api-error.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { UploadItem } from "../transfer/blobs.js";
import { sameStat, type BaseKeeper } from "./base-keeper.js";
import type { Ledger } from "./ledger.js";
import type { LocalTree } from "./local-tree.js";
import type { Plan, Put, RemoteDelete } from "./plan.js";
import type { RemoteView } from "./remote-view.js";

/**
 * The commit half of a round: the blobs the server lacks go up, then one commit whose every change
 * carries its expectation (docs/api.md, v1.2). A 409 names the paths whose remote moved: only those
 * are decided again, on the hashes it gives, and the commit is sent again (so a race costs one
 * more round trip, never an overwrite). A v1 server, which cannot check, gets a fresh listing
 * right before each commit instead, and a warning, once, that a window remains.
 */

export interface CommitStepContext {
  remote: ProjectRemote;
  view: RemoteView;
  base: BaseKeeper;
  ledger: Ledger;
  tree: LocalTree;
  report: Reporter;
  source: CommitSource;
  /** Bytes kept from hashing, by path. */
  kept: ReadonlyMap<string, Uint8Array>;
  /** Decides these paths again on the remote view as it is now; the plan for them replaces theirs. */
  replan(paths: readonly string[], signal: AbortSignal): Promise<Plan>;
  /** Paths that changed while they were committed, or need another try: the next round. */
  requeue: Set<string>;
  /** Blobs the server now holds (a push's progress line counts them). */
  onUploaded?: (items: readonly UploadItem[]) => void;
  now(): number;
}

/** Conflicting answers in a row before the batch is left for the next round (never a storm). */
const MAX_CONFLICT_ROUNDS = 3;
const MAX_BLOB_ROUNDS = 5;
/** Stats in flight after a commit (observe.ts stats a listing's strays as many at once). */
const STAT_CONCURRENCY = 32;
/** Not journaled: a retry meets the same limit. */
const TOO_LARGE =
  "the server refuses a file this large (413); a retry will not help: raise the server's limit (uspark serve --max-blob-bytes), or keep the file out (.gitignore or --ignore)";

export async function commitStep(plan: Plan, ctx: CommitStepContext, signal: AbortSignal): Promise<void> {
  let key = randomUUID();
  let conflictRounds = 0;
  let blobRounds = 0;
  if (!(await uploadBlobs(plan, ctx, signal))) key = randomUUID();
  for (;;) {
    if (ctx.view.api !== "1.2") await decideOnFreshListing(plan, ctx, signal);
    const changes = changesOf(plan);
    if (changes.length === 0) return;
    const paths = changes.map((c) => c.path);
    try {
      await ctx.base.sending({ key, source: ctx.source, changes, copies: plan.copies.map((c) => c.path) });
      const { version, chain } = await ctx.remote.commit(changes, ctx.source, key, signal);
      ctx.base.answered(key, paths, true);
      return void (await applied(plan, changes, version, ctx, chain));
    } catch (error) {
      if (!(error instanceof ApiError) || error.fatal || signal.aborted) throw error;
      // A refusal (4xx) applied nothing; a lost answer or a 5xx from a proxy may have applied it all: its intent stays.
      if (error.status !== undefined && error.status >= 400 && error.status < 500) ctx.base.answered(key, paths, false);
      if (error.code === "conflict" && conflictRounds++ < MAX_CONFLICT_ROUNDS) {
        await redecide(plan, conflictsOf(error, changes), ctx, signal);
        await uploadBlobs(plan, ctx, signal);
        key = randomUUID();
        continue;
      }
      if (error.code === "missing_blobs" && blobRounds++ < MAX_BLOB_ROUNDS) {
        const missing = new Set(Array.isArray(error.body?.missing) ? (error.body.missing as string[]) : []);
        for (const sha of missing) ctx.remote.transfer.known.delete(sha);
        if (!(await uploadBlobs(plan, ctx, signal, missing))) key = randomUUID();
        continue;
      }
      if (dropRefusedPath(plan, error, ctx)) {
        key = randomUUID();
        continue;
      }
      return giveUp(plan, `commit failed: ${error.message}`, ctx);
    }
  }
}

/**
 * A server that cannot check expectations (API v1, v1.1): a listing right before the commit, and
 * every path of the commit decided again on it. A window remains between the two: said once, by
 * whoever made the session.
 */
async function decideOnFreshListing(plan: Plan, ctx: CommitStepContext, signal: AbortSignal): Promise<void> {
  ctx.report.warnOnce(
    "blind-commits",
    "old-api",
    `the server speaks API ${ctx.view.api}, which cannot refuse a commit over a newer edit: each commit is decided on a listing taken right before it, and another writer's edit in between can still be overwritten (upgrade the server to API 1.2)`,
  );
  await ctx.view.refresh(signal);
  const paths = new Set([...plan.puts.map((p) => p.path), ...plan.copies.map((c) => c.from), ...plan.deletes.map((d) => d.path)]);
  mergeReplan(plan, await ctx.replan([...paths], signal), paths);
}

function changesOf(plan: Plan): Change[] {
  const put = (p: Put): Change => ({ op: "put", path: p.path, sha256: p.sha256, size: p.size, expect: p.expect });
  const del = (d: RemoteDelete): Change => ({ op: "delete", path: d.path, expect: d.expect });
  return [...plan.puts.map(put), ...plan.copies.map(put), ...plan.deletes.map(del)];
}

/** The 409's entries, which must name only paths this commit sent: anything else is a protocol error. */
function conflictsOf(error: ApiError, changes: readonly Change[]): ConflictEntry[] {
  const entries = conflictEntries(error.body);
  const sent = new Set(changes.map((c) => c.path));
  const foreign = entries?.find((e) => !sent.has(e.path));
  if (!entries || entries.length === 0 || foreign) {
    const why = foreign
      ? `a 409 names ${JSON.stringify(foreign.path)}, which the commit did not change`
      : "a 409 without the conflicting paths";
    throw new ApiError(`POST /commits: the server answered ${why}`, { code: "protocol", fatal: true });
  }
  return entries;
}

/** The remote moved under these paths: take its word for them and decide them again. */
async function redecide(plan: Plan, entries: readonly ConflictEntry[], ctx: CommitStepContext, signal: AbortSignal): Promise<void> {
  ctx.view.conflicted(entries);
  // A file/directory clash (v1.3) names the other path, not what it holds: the view learns it from the feed.
  if (entries.some((entry) => entry.clash !== undefined)) await ctx.view.refresh(signal);
  const copyOwners = new Map(plan.copies.map((c) => [c.path, c.from]));
  const paths = new Set<string>();
  for (const entry of entries) {
    const owner = copyOwners.get(entry.path);
    if (owner === undefined) {
      paths.add(entry.path);
      continue;
    }
    // The copy does not hold what the record says: ours already (saved before a crash, the record
    // not), or changed by someone else. Either way the record is stale, and expecting it again
    // would be refused forever: decided again without it, the file's version is found in a copy
    // that holds it, or goes to a new one, and someone else's edit of the old copy is left alone.
    if (ctx.base.conflict(owner)?.copy === entry.path) ctx.base.closeConflict(owner);
    paths.add(owner);
  }
  ctx.report.debug("conflict-retry", `the remote moved under ${[...paths].join(", ")}: deciding them again`, { paths: [...paths] });
  mergeReplan(plan, await ctx.replan([...paths], signal), paths);
}

/** Replaces every part of `plan` that concerns `paths` (or their copies) with `fresh`. */
export function mergeReplan(plan: Plan, fresh: Plan, paths: ReadonlySet<string>): void {
  const keep = <T extends { path: string }>(list: T[]) => list.filter((x) => !paths.has(x.path));
  plan.puts = [...keep(plan.puts), ...fresh.puts];
  plan.copies = [...plan.copies.filter((c) => !paths.has(c.from)), ...fresh.copies];
  plan.deletes = [...keep(plan.deletes), ...fresh.deletes];
  plan.writes = [...keep(plan.writes), ...fresh.writes];
  plan.removes = [...keep(plan.removes), ...fresh.removes];
  plan.settles = [...keep(plan.settles), ...fresh.settles];
  plan.conflicts = [...keep(plan.conflicts), ...fresh.conflicts];
  plan.stillOpen = [...keep(plan.stillOpen), ...fresh.stillOpen];
  plan.resolved = [...plan.resolved.filter((p) => !paths.has(p)), ...fresh.resolved];
  plan.leftAlone = [...keep(plan.leftAlone), ...fresh.leftAlone];
}

/**
 * Makes sure the server holds the blob of every put and copy (only those in `only`, when given,
 * whatever we believe). Puts whose blob could not go up leave the plan. False when the plan changed.
 */
async function uploadBlobs(plan: Plan, ctx: CommitStepContext, signal: AbortSignal, only?: ReadonlySet<string>): Promise<boolean> {
  const all = [...plan.puts, ...plan.copies];
  const bySha = new Map<string, Put>();
  for (const put of all) if (!only || only.has(put.sha256)) bySha.set(put.sha256, bySha.get(put.sha256) ?? put);
  const items = [...bySha.values()].map((put) => uploadItem(put, ctx));
  const outcomes = await ctx.remote.transfer.uploadBlobs(items, signal, { force: only !== undefined, onSent: ctx.onUploaded });
  const dropped = new Set<Put>();
  for (const put of all) {
    const outcome = outcomes.get(put.sha256) ?? "ok";
    if (outcome === "ok") continue;
    dropped.add(put);
    if (outcome === "changed") ctx.requeue.add(put.from);
    else if (outcome === "too-large")
      ctx.ledger.set(put.from, { status: "skipped", reason: TOO_LARGE, journal: false, local: ctx.tree.where(put.from) });
    else ctx.ledger.set(put.from, { status: "failed", reason: outcome.reason, local: ctx.tree.where(put.from) });
  }
  if (dropped.size === 0) return true;
  plan.puts = plan.puts.filter((p) => !dropped.has(p));
  plan.copies = plan.copies.filter((p) => !dropped.has(p));
  return false;
}

/** The bytes kept from hashing, or a re-read checked against the hash (undefined: it changed). */
function uploadItem(put: Put, ctx: CommitStepContext): UploadItem {
  return {
    sha256: put.sha256,
    size: put.size,
    bytes: ctx.kept.get(put.from),
    load: async () => {
      const again = await ctx.tree.read(put.from, Number.MAX_SAFE_INTEGER);
      return again.kind === "file" && again.sha256 === put.sha256 ? again.bytes : undefined;
    },
  };
}

/** The server refused one path by name (400 invalid_path): that path leaves the commit, the rest goes. */
function dropRefusedPath(plan: Plan, error: ApiError, ctx: CommitStepContext): boolean {
  const bad = typeof error.body?.path === "string" ? error.body.path : undefined;
  if (bad === undefined) return false;
  const before = changesOf(plan).length;
  const owner = plan.copies.find((c) => c.path === bad)?.from ?? bad;
  plan.puts = plan.puts.filter((p) => p.path !== bad);
  plan.copies = plan.copies.filter((p) => p.path !== bad);
  plan.deletes = plan.deletes.filter((d) => d.path !== bad);
  if (changesOf(plan).length === before) return false;
  ctx.ledger.set(owner, { status: "failed", reason: `the server refused it: ${error.message}`, local: ctx.tree.where(owner) });
  return true;
}

function giveUp(plan: Plan, reason: string, ctx: CommitStepContext): void {
  ctx.report.warn("commit-failed", reason, { paths: changesOf(plan).map((c) => c.path) });
  for (const path of new Set([...plan.puts, ...plan.copies].map((p) => p.from).concat(plan.deletes.map((d) => d.path)))) {
    ctx.ledger.set(path, { status: "failed", reason, local: ctx.tree.where(path) });
  }
  plan.puts = [];
  plan.copies = [];
  plan.deletes = [];
}

/** The commit went through at `version`: the view, the base, the conflicts and the ledger follow. */
async function applied(plan: Plan, changes: Change[], version: number, ctx: CommitStepContext, chain?: string): Promise<void> {
  ctx.view.committed(version, changes, chain);
  const { base, ledger } = ctx;
  base.reachVersion(version, chain); // before the entries it made (see Reconciler.record)
  for (const put of plan.puts) {
    base.settle(put.path, put.sha256, put.local.stat, put.local.readAt);
    base.closeConflict(put.path);
    ledger.set(put.path, { status: "synced", at: put.local.readAt });
  }
  for (const del of plan.deletes) {
    base.settle(del.path, null);
    ledger.set(del.path, { status: "synced", at: ctx.now() });
  }
  for (const copy of plan.copies) recordCopy(copy, plan, ctx);
  ledger.commits++;
  ledger.pushed += plan.puts.length;
  ledger.deleted += plan.deletes.length;
  ledger.copies += plan.copies.length;
  ctx.report.info(
    "commit",
    versionLine(
      "committed",
      version,
      [...plan.puts, ...plan.copies].map((p) => p.path),
      plan.deletes.map((d) => d.path),
    ),
    {
      version,
      files: [...plan.puts, ...plan.copies].map((p) => p.path),
      deleted: plan.deletes.map((d) => d.path),
    },
  );
  // Written while we were busy? Then the next round takes the newer content (stat'ed side by side: 10,000 puts a commit).
  await mapLimit([...plan.puts, ...plan.copies], STAT_CONCURRENCY, async (put) => {
    const now = await ctx.tree.stat(put.from);
    if (now === undefined || now === "other" || !sameStat(now, put.local.stat)) ctx.requeue.add(put.from);
  });
}

/** A conflict copy is on the remote: the conflict is open (said once, when it is new). */
function recordCopy(copy: Put, plan: Plan, ctx: CommitStepContext): void {
  const found = plan.conflicts.find((c) => c.path === copy.from);
  const open = ctx.base.conflict(copy.from);
  const record = open ?? {
    local: copy.sha256,
    remote: found?.remote ?? null,
    copy: copy.path,
    copySha: copy.sha256,
    at: new Date(ctx.now()).toISOString(),
  };
  ctx.base.openConflict(copy.from, { ...record, copy: copy.path, copySha: copy.sha256 });
  ctx.ledger.set(copy.from, { status: "conflict", copy: copy.path, local: ctx.tree.where(copy.from) });
  if (!found) return;
  const why =
    found.clash !== undefined
      ? `a file and a directory under one name: ${found.clash} is ${found.clash.startsWith(`${copy.from}/`) ? "under it" : "a file"} on the remote, and the server refuses both`
      : found.unsynced
        ? "differs from the remote and was never synced here (nothing tells which is newer)"
        : "changed here and remotely";
  ctx.report.warn("conflict", `conflict ${copy.from}: ${why}; the remote version stays, yours is kept here and committed as ${copy.path}`, {
    path: copy.from,
    local: found.local,
    remote: found.remote,
    copy: copy.path,
  });
}

/** `committed v8: 3 files (src/a.ts, src/b.ts, old.txt deleted)`; a two-way watch's `pulled v9: …` */
export function versionLine(verb: "committed" | "pulled", version: number, files: readonly string[], deleted: readonly string[]): string {
  const names = [...files, ...deleted.map((d) => `${d} deleted`)];
  const total = names.length;
  const shown = names.slice(0, 3).join(", ") + (total > 3 ? `, … ${total - 3} more` : "");
  return `${verb} v${version}: ${total} ${total === 1 ? "file" : "files"} (${shown})`;
}
