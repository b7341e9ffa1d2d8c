import type { CommitSource } from "../api/types.js";
import type { Reporter } from "../report/reporter.js";
import { realTimers, type Timers } from "../util/timers.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import { sameStat, type BaseKeeper } from "./base-keeper.js";
import { commitStep, type CommitStepContext } from "./commit-step.js";
import { isConflictCopyOf, RESOLVE_HINT } from "./conflict-copy.js";
import { Ledger } from "./ledger.js";
import { localStep, type LocalChanges, type LocalStepContext } from "./local-step.js";
import type { LocalStat, LocalTree, Unrepresentable } from "./local-tree.js";
import { Observer, type Observation } from "./observe.js";
import { commitChunks } from "./commit-chunks.js";
import { plan, type NewConflict, type PathState, type Plan, type Resolution } from "./plan.js";
import type { Mode } from "./reconcile.js";
import type { TransferProgress } from "./progress.js";
import type { RemoteView } from "./remote-view.js";
import { scanTree, type ScanFindings } from "./scan.js";
import { settleIntents } from "./intents.js";

/**
 * One round of the reconcile (docs/sync.md#the-reconcile), the same for push, pull, every scan, the watch and
 * status; in order:
 *   1. which paths: the given ones, or the whole tree, the base and the remote listing
 *   2. the local side: a stat each, a hash only where the stat moved (observe.ts)
 *   3. the remote side: the session's view, confirmed by a fresh look where it alone says "equal"
 *   4. per path base, local, remote → plan(): the one decision and every guard (plan.ts)
 *   5. the commit: blobs, then one commit whose changes carry their expectation (commit-step.ts)
 *   6. the local writes and deletes, each re-checked right before it happens (local-step.ts)
 * The base of a path moves only when both sides are acknowledged equal at one hash.
 */

export interface ReconcilerDeps {
  tree: LocalTree;
  remote: ProjectRemote;
  view: RemoteView;
  base: BaseKeeper;
  report: Reporter;
  source: CommitSource;
  /** This machine's name, in conflict copies. */
  host: string;
  maxFileSize: number;
  timers?: Timers;
  /** Clean tracked files of a git checkout with their stat then (git-clean.ts), asked once, only when a file has no base entry. */
  gitClean?: () => Promise<ReadonlyMap<string, LocalStat>>;
  /** Told how far the uploads and the local writes of a round are (a push's or a pull's progress line). */
  onProgress?: TransferProgress;
}

export interface RoundRequest {
  mode: Mode;
  /** The paths to decide; "all": the whole tree, the base and the remote listing. */
  paths: readonly string[] | "all";
  /** Paths an event named: read whatever their stat says, and a delete of one is exempt from the mass-delete guard. */
  evidence?: ReadonlySet<string>;
  /** Conflicts and held deletes to force through (push --force: mine; pull --force: theirs). */
  force?: (path: string) => boolean;
  /** Conflicts to end as asked (uspark resolve). */
  resolve?: (path: string) => Resolution | undefined;
  /** Plan, report nothing, change nothing (status, --dry-run). */
  dryRun?: boolean;
  /** A tripped mass-delete guard stops the whole commit (push: all or nothing). */
  allOrNothing?: boolean;
  /** With "all": only paths this accepts (push <paths>: the directories given). */
  within?: (path: string) => boolean;
  /**
   * The server was rewound (push --onto-rewound): what it holds now is the base of every path this
   * tree holds or last synced, so this tree's files are committed over it (src/reconcile/lineage.ts).
   */
  onto?: boolean;
}

export interface RoundResult {
  plan: Plan;
  states: PathState[];
  /** To decide again soon: changed while synced, or the remote moved too often. */
  requeue: string[];
  /** Local files not read (too large, symlinks, unreadable), with why. */
  unreadable: Map<string, Extract<Observation, { kind: "unreadable" }>>;
  /** Files the API cannot name (with "all"). */
  unrepresentable: Unrepresentable[];
  /** Commits left undone: the mass-delete guard refused (allOrNothing). */
  refused: boolean;
  /** Remote paths left out: never written (`refused`: invalid, reserved, a hostile listing) or ignored here. */
  outOfScope: { path: string; reason: string; refused: boolean }[];
  /** What the round wrote and deleted here (the remote's changes). */
  local: LocalChanges;
  /** The remote version the round reached. */
  version: number;
}

export class Reconciler {
  readonly ledger = new Ledger();
  private readonly observer: Observer;
  private clean: Promise<ReadonlyMap<string, LocalStat>> | undefined;

  constructor(private readonly deps: ReconcilerDeps) {
    this.observer = new Observer({
      tree: deps.tree,
      base: deps.base,
      maxFileSize: deps.maxFileSize,
      timers: deps.timers,
      onProgress: deps.onProgress,
    });
  }

  async round(request: RoundRequest, signal: AbortSignal): Promise<RoundResult> {
    // An earlier run's commits first: their answers are the base this round decides on.
    if (!request.dryRun && this.deps.base.openIntents.length > 0)
      await settleIntents(this.deps.base, this.deps.remote, this.deps.view, this.deps.report, signal);
    const seen = this.deps.view.generation;
    const copiesBefore = this.deps.base.conflictCopies();
    const { paths, listed, unrepresentable, outOfScope } = await this.pathsOf(request, signal);
    const observed = await this.observer.observe(paths, signal, listed, request.evidence);
    await this.deps.view.ensure(signal);
    const unreadable = new Map<string, Extract<Observation, { kind: "unreadable" }>>();
    const states = await this.statesOf(paths, observed, request, unreadable, signal);
    if (this.deps.view.generation === seen && needsConfirmation(states)) await this.confirm(states, signal);
    const planned = plan(states, this.context(request));
    const result: RoundResult = {
      plan: planned,
      states,
      requeue: [],
      unreadable,
      unrepresentable,
      refused: false,
      outOfScope,
      local: { written: [], removed: [] },
      version: this.deps.view.version,
    };
    if (request.dryRun) return result;
    this.record(planned, unreadable, request.evidence);
    const requeue = new Set<string>([...unreadable].filter(([, u]) => u.retry).map(([p]) => p));
    result.refused = request.allOrNothing === true && planned.held.tripped;
    if (!result.refused) {
      const progress = this.pushProgress(planned);
      const context = this.commitContext(observed, request, requeue, progress.uploaded);
      for (const part of commitChunks(planned)) {
        await commitStep(part, context, signal);
        // A path decided again after a 409 may now be the local side's (two-way).
        if (part !== planned) (planned.writes.push(...part.writes), planned.removes.push(...part.removes));
      }
      progress.end();
    }
    withoutOwnCopies(planned, this.deps.base.conflictCopies());
    result.local = await localStep(planned, this.localContext(requeue), signal);
    await (this.deps.tree as { flushDirectories?: () => Promise<void> }).flushDirectories?.();
    this.deps.base.reachVersion(this.deps.view.version, this.deps.view.chain);
    result.version = this.deps.view.version;
    // A conflict closed: its copy is a path like any other again, to decide (a two-way watch pulls it).
    const copiesAfter = this.deps.base.conflictCopies();
    for (const copy of copiesBefore) if (!copiesAfter.has(copy)) requeue.add(copy);
    result.requeue = [...requeue];
    return result;
  }

  /** One progress count for all the blobs of a round, whichever of its commits sends them (a re-sent blob counts once). */
  private pushProgress(planned: Plan): { uploaded: (items: readonly { size: number }[]) => void; end: () => void } {
    const sizes = new Map([...planned.puts, ...planned.copies].map((put) => [put.sha256, put.size]));
    const total = { files: sizes.size, bytes: [...sizes.values()].reduce((sum, size) => sum + size, 0) };
    const done = { files: 0, bytes: 0 };
    const tell = this.deps.onProgress;
    tell?.("pushing", done, total); // the clock of the time left starts now
    return {
      uploaded: (items) => {
        for (const item of items) {
          done.files = Math.min(total.files, done.files + 1);
          done.bytes = Math.min(total.bytes, done.bytes + item.size);
        }
        tell?.("pushing", done, total);
      },
      end: () => tell?.("pushing", total, total),
    };
  }

  /** The paths a scan finds moved away from the base (two-way: on either side); they go to the queue. */
  scan(twoWay: boolean, signal: AbortSignal): Promise<ScanFindings> {
    const { tree, base, view, report } = this.deps;
    return scanTree(
      {
        tree,
        base,
        view,
        report,
        observe: (paths, scanSignal, listed) => this.observer.observe(paths, scanSignal, listed),
        reads: () => this.observer.reads,
      },
      twoWay,
      signal,
    );
  }

  /** Step 1: the paths of the round, with the listing's stats when it is the whole tree. */
  private async pathsOf(
    request: RoundRequest,
    signal: AbortSignal,
  ): Promise<{
    paths: string[];
    listed?: ReadonlyMap<string, LocalStat>;
    unrepresentable: Unrepresentable[];
    outOfScope: RoundResult["outOfScope"];
  }> {
    const { tree, base, view } = this.deps;
    const copies = base.conflictCopies();
    const outOfScope: RoundResult["outOfScope"] = [];
    const inScope = (path: string) => {
      if (copies.has(path) || !(request.within?.(path) ?? true)) return false;
      const why = tree.outOfScope(path) ?? refusedBy(view, path);
      if (why && view.files.has(path)) outOfScope.push({ path, ...why });
      return why === undefined;
    };
    if (request.paths !== "all") return { paths: [...new Set(request.paths)].filter(inScope), unrepresentable: [], outOfScope };
    const [listing] = await Promise.all([tree.list(signal), view.ensure(signal)]);
    const all = new Set([...listing.files.keys(), ...base.base.files.keys(), ...view.files.keys()]);
    return { paths: [...all].filter(inScope), listed: listing.files, unrepresentable: listing.unrepresentable, outOfScope };
  }

  /** Step 4's input: per path, the three sides (a clean git file with no base entry counts as its own base). */
  private async statesOf(
    paths: readonly string[],
    observed: ReadonlyMap<string, Observation>,
    request: RoundRequest,
    unreadable: Map<string, Extract<Observation, { kind: "unreadable" }>>,
    signal: AbortSignal,
  ): Promise<PathState[]> {
    const states: PathState[] = [];
    const noBase: PathState[] = [];
    for (const path of paths) {
      const seen = observed.get(path)!;
      if (seen.kind === "unreadable") {
        unreadable.set(path, seen);
        continue;
      }
      const local = seen.kind === "file" ? seen.file : null;
      const remote = this.deps.view.get(path);
      const onto = request.onto === true && (local !== null || this.deps.base.sha(path) !== null);
      const base = onto ? (remote?.sha256 ?? null) : this.deps.base.baseFor(path, remote?.sha256 ?? null);
      const state: PathState = { path, base, local, remote, evidence: request.evidence?.has(path) };
      if (state.base === null && local && !onto) noBase.push(state);
      states.push(state);
    }
    if (noBase.length > 0) await this.assumeCleanBases(noBase, signal);
    return states;
  }

  /**
   * A file git reports clean, with no base entry, is recoverable from git: it counts as unchanged
   * (base = local), so the remote wins, its edits and deletes included. A delete only when the
   * remote had the path once: a file it never had is new here, not deleted there.
   */
  private async assumeCleanBases(states: PathState[], signal: AbortSignal): Promise<void> {
    if (!this.deps.gitClean) return;
    this.clean ??= this.deps.gitClean();
    const clean = await this.clean;
    for (const state of states) {
      const then = clean.get(state.path);
      const now = state.local!.stat;
      // Clean when git was asked, and not touched since.
      if (!then || !sameStat(then, now)) continue;
      if (state.remote || (await this.remoteHadOnce(state.path, signal))) state.base = state.local!.sha256;
    }
  }

  private async remoteHadOnce(path: string, signal: AbortSignal): Promise<boolean> {
    const { view, remote } = this.deps;
    if (view.api !== "1.2" || view.version === 0) return false;
    const feed = await remote.feed(0, { limit: 1, path }, signal);
    return feed.commits.length > 0;
  }

  /** Step 3: decisions of "equal" that only the (possibly old) view backs are made again on a fresh one. */
  private async confirm(states: PathState[], signal: AbortSignal): Promise<void> {
    await this.deps.view.refresh(signal);
    for (const state of states) state.remote = this.deps.view.get(state.path);
  }

  private context(request: RoundRequest) {
    const { base } = this.deps;
    const taken = (path: string) => this.deps.view.files.has(path);
    const clash = (path: string) => this.deps.view.clash(path);
    return {
      mode: request.mode,
      open: base.base.conflicts,
      held: base.base.held,
      baseFiles: base.base.files.size,
      force: request.force,
      resolve: request.resolve,
      now: new Date(this.now()),
      host: this.deps.host,
      taken,
      clash,
    };
  }

  /** What the plan settles without a request: equal paths, conflicts now gone or still open, held deletes. */
  private record(
    planned: Plan,
    unreadable: ReadonlyMap<string, Extract<Observation, { kind: "unreadable" }>>,
    evidence?: ReadonlySet<string>,
  ): void {
    const { base, tree, view } = this.deps;
    // The version (and chain hash) first, then the entries that reflect it: a save in between must
    // never keep entries of a version newer than the one recorded (a server restored to a backup
    // between the two would not be refused, src/reconcile/lineage.ts; simulation, rewind).
    base.reachVersion(view.version, view.chain);
    for (const { path, sha256, local } of planned.settles) {
      base.settle(path, sha256, local?.stat, local?.readAt);
      this.ledger.unchanged++;
      this.ledger.set(path, { status: "synced", at: local?.readAt ?? this.now() });
    }
    for (const path of planned.resolved)
      if (base.closeConflict(path)) this.deps.report.info("resolved", `conflict ${path} resolved`, { path });
    for (const { path, remote } of planned.stillOpen) {
      const open = base.conflict(path)!;
      if (open.remote !== remote) base.openConflict(path, { ...open, remote });
      this.ledger.set(path, { status: "conflict", copy: open.copy, local: tree.where(path) });
    }
    this.adoptExistingCopies(planned);
    for (const found of planned.conflicts) if (found.copy === undefined) this.openWithoutCopy(found);
    for (const path of planned.unsyncedDeletes) {
      const reason = "deleted here before this tree ever synced it: the remote keeps it";
      this.deps.report.warnOnce(
        tree.where(path),
        "delete-unsynced",
        `not deleted remotely ${path}: ${reason} (to delete it there: uspark pull ${path}, delete it, uspark push)`,
        { path },
      );
      this.ledger.set(path, { status: "skipped", reason, journal: false, local: tree.where(path) });
    }
    const held = [...planned.held.remote, ...planned.held.local];
    base.hold(held);
    for (const path of held)
      this.ledger.set(path, { status: "held", reason: "a delete held by the mass-delete guard", local: tree.where(path) });
    for (const [path, u] of unreadable) {
      if (u.retry) continue;
      // A symlink a scan came across (never followed) is no news; one an event named, or a file too large, is.
      // Said once per local file, as the path policy's refusal of the same file is: a symlink
      // swapped in is one warning, whether this read or the watcher's event notices it first.
      if (!u.failed && (u.journal || evidence?.has(path)))
        this.deps.report.warnOnce(tree.where(path), "skipped", `not synced ${path}: ${u.reason}`, { path, reason: u.reason });
      else if (!u.failed) this.deps.report.debug("skipped", `not synced ${path}: ${u.reason}`, { path, reason: u.reason });
      this.ledger.set(
        path,
        u.failed
          ? { status: "failed", reason: u.reason, local: tree.where(path) }
          : { status: "skipped", reason: u.reason, journal: u.journal, local: tree.where(path) },
      );
    }
  }

  /** A conflict a pull met: recorded and said, nothing committed (a command that writes commits its copy). */
  private openWithoutCopy(found: NewConflict): void {
    const { path } = found;
    this.deps.base.openConflict(path, { local: found.local, remote: found.remote, at: new Date(this.now()).toISOString() });
    this.ledger.set(path, { status: "conflict", local: this.deps.tree.where(path) });
    const why = found.unsynced
      ? "differs from the remote and was never synced here (nothing tells which is newer)"
      : "changed here and remotely";
    this.deps.report.warn(
      "conflict",
      `conflict ${path}: ${why}; both kept as they are (yours here, theirs remotely): ${RESOLVE_HINT.replace("<path>", path)}`,
      { path, local: found.local, remote: found.remote },
    );
  }

  /**
   * A new conflict whose copy the remote already holds (a crash after the commit, before the base
   * was saved): no second copy. Not a copy this tree syncs as a file (pulled while no conflict was
   * open): adopted, it would leave the sync, and edits of it here would never go anywhere.
   */
  private adoptExistingCopies(planned: Plan): void {
    for (const conflict of [...planned.conflicts]) {
      const existing = [...this.deps.view.files].find(
        ([p, f]) => f.sha256 === conflict.local && isConflictCopyOf(p, conflict.path) && this.deps.base.sha(p) === null,
      );
      if (!existing) continue;
      planned.copies = planned.copies.filter((c) => c.from !== conflict.path);
      planned.conflicts = planned.conflicts.filter((c) => c !== conflict);
      this.deps.base.openConflict(conflict.path, {
        local: conflict.local,
        remote: conflict.remote,
        copy: existing[0],
        copySha: conflict.local,
        at: new Date(this.now()).toISOString(),
      });
      this.ledger.set(conflict.path, { status: "conflict", copy: existing[0], local: this.deps.tree.where(conflict.path) });
    }
  }

  // The step contexts name their parts: `{ ...this.deps, more }` made a new hidden class on every
  // call in Node 20's optimized code (microseconds a round, a tenth of the simulation's CPU).
  private commitContext(
    observed: ReadonlyMap<string, Observation>,
    request: RoundRequest,
    requeue: Set<string>,
    onUploaded: CommitStepContext["onUploaded"],
  ): CommitStepContext {
    const kept = new Map<string, Uint8Array>();
    for (const [path, o] of observed) if (o.kind === "file" && o.bytes) kept.set(path, o.bytes);
    const { remote, view, base, tree, report, source } = this.deps;
    return {
      remote,
      view,
      base,
      tree,
      report,
      // Every commit names the machine it came from (the web view shows it).
      source: { ...source, host: this.deps.host },
      ledger: this.ledger,
      kept,
      requeue,
      onUploaded,
      now: () => this.now(),
      replan: async (paths, signal) => {
        const again = await this.observer.observe(paths, signal);
        for (const [path, o] of again) if (o.kind === "file" && o.bytes) kept.set(path, o.bytes);
        const unreadable = new Map<string, Extract<Observation, { kind: "unreadable" }>>();
        const fresh = plan(await this.statesOf(paths, again, request, unreadable, signal), this.context(request));
        this.record(fresh, unreadable, request.evidence);
        return fresh;
      },
    };
  }

  private localContext(requeue: Set<string>): LocalStepContext {
    const { remote, base, tree, report, onProgress } = this.deps;
    const startedAt = this.now();
    return {
      remote,
      base,
      tree,
      report,
      onProgress,
      ledger: this.ledger,
      requeue,
      backupLabel: () => backupLabel(startedAt),
      now: () => this.now(),
    };
  }

  private now(): number {
    return (this.deps.timers ?? realTimers).now();
  }
}

/**
 * The local writes and deletes of a round leave out the copies of the conflicts open now: one
 * adopted during the round (after a 409 too) was planned as a path like any other, and pulled
 * here it would be a file whose edits never go anywhere (simulation seeds 330 and 906).
 */
function withoutOwnCopies(planned: Plan, copies: ReadonlySet<string>): void {
  planned.writes = planned.writes.filter((w) => !copies.has(w.path));
  planned.removes = planned.removes.filter((r) => !copies.has(r.path));
}

function refusedBy(view: RemoteView, path: string): { reason: string; refused: boolean } | undefined {
  const why = view.refused.get(path);
  return why === undefined ? undefined : { reason: why, refused: true };
}

/** Any path whose local side moved from the base and that only the view says equal to the remote. */
function needsConfirmation(states: readonly PathState[]): boolean {
  return states.some((s) => s.local !== null && s.local.sha256 !== s.base && s.remote?.sha256 === s.local.sha256);
}

/** `20261125-101500`, a folder name under .uspark/backup/. */
function backupLabel(now: number): string {
  return new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
