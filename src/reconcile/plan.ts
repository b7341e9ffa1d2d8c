import { isMassDelete } from "./mass-delete.js";
import type { OpenConflict } from "./base.js";
import type { LocalStat } from "./base-keeper.js";
import { conflictCopyPath } from "./conflict-copy.js";
import { acts, reconcile, type Decision, type Mode, type Sha } from "./reconcile.js";

/**
 * From decisions to what is done, once, with every guard (docs/sync.md#the-reconcile): the mode's filter (a
 * push sends, a pull writes), conflicts (a copy of the local version committed next to the remote
 * file; an open one only updates its copy), forced paths, and the mass-delete guard, which counts
 * deletes against what the tree holds now (a rename is no mass delete) and keeps a refused delete
 * refused until --force. Pure: plain values in, plain values out; no I/O, no clock.
 */

/** A local file as observed: its hash and the stat it had when read. */
export interface LocalFile {
  sha256: string;
  size: number;
  stat: LocalStat;
  /** When it was read (ms), for the base's racy-stat rule. */
  readAt: number;
}

export interface RemoteEntry {
  sha256: string;
  size: number;
}

/** One path, everything known about it. */
export interface PathState {
  path: string;
  base: Sha;
  local: LocalFile | null;
  remote: RemoteEntry | null;
  /** Deleted with evidence (a tool or file event, a commit of the feed), not only found missing by a scan or listing. */
  evidence?: boolean;
}

export interface PlanContext {
  mode: Mode;
  /** Conflicts already open (path → record). */
  open: ReadonlyMap<string, OpenConflict>;
  /** Deletes the guard refused before. */
  held: ReadonlySet<string>;
  /** Files in the base (the guard's measure of "the project"). */
  baseFiles: number;
  /** Conflicts and held deletes to force through (push --force: mine; pull --force: theirs). */
  force?: (path: string) => boolean;
  /** For naming new conflict copies. */
  now: Date;
  host: string;
  /** Paths the remote holds: a new copy is never named over one. */
  taken?: (path: string) => boolean;
  /** Conflicts to end as asked (uspark resolve): mine, theirs or both. */
  resolve?: (path: string) => Resolution | undefined;
  /** The remote file a local file at this path would clash with (a file and a directory under one name; see RemoteView.clash). */
  clash?: (path: string) => string | undefined;
}

/**
 * How `uspark resolve` ends a conflict: `mine` commits the local version over the remote's,
 * `theirs` writes the remote's here (the local one backed up), each deleting the copy remotely
 * (expecting what it held: a copy someone edited is kept); `both` takes theirs at the path and
 * keeps yours as a file of its own, the copy.
 */
export type Resolution = "mine" | "theirs" | "both";

export interface Put {
  path: string;
  sha256: string;
  size: number;
  expect: Sha;
  /** The local file the content comes from (a copy's is the conflicting file's). */
  from: string;
  local: LocalFile;
}

export interface RemoteDelete {
  path: string;
  expect: Sha;
}

export interface LocalWrite {
  path: string;
  sha256: string;
  size: number;
  /** What the local file must still be right before it is replaced (`null`: absent). */
  expectLocal: LocalFile | null;
  /** Forced theirs: keep the local version under .uspark/backup/ first. */
  backup: boolean;
}

export interface LocalRemove {
  path: string;
  expectLocal: LocalFile;
}

export interface NewConflict {
  path: string;
  local: string;
  remote: string | null;
  /** Where the local version is committed; none in a pull, which never commits. */
  copy?: string;
  /** No base: the path was never synced here, so neither side can be said to have changed. */
  unsynced: boolean;
  /** A file here where the remote has a directory, or the other way round: the remote path it clashes with. */
  clash?: string;
}

export interface Plan {
  puts: Put[];
  deletes: RemoteDelete[];
  /** Conflict copies to commit (new ones, and open ones whose local version moved). */
  copies: Put[];
  writes: LocalWrite[];
  removes: LocalRemove[];
  /** Equal on both sides: the base follows (the local stat with it). */
  settles: { path: string; sha256: Sha; local: LocalFile | null }[];
  /** Conflicts found now (said once, recorded when their copy is committed). */
  conflicts: NewConflict[];
  /** Open conflicts that still are (their record's remote side may have moved). */
  stillOpen: { path: string; remote: Sha }[];
  /** Open conflicts that are no more (made equal, or one side gave way). */
  resolved: string[];
  /** Deletes refused by the mass-delete guard, here (local) and remotely. */
  held: { remote: string[]; local: string[]; tripped: boolean };
  /** Decisions this mode leaves to another (a push leaves a remote change alone): status, dry runs. */
  leftAlone: { path: string; decision: Decision }[];
  /**
   * Deleted here with evidence (an event), but never synced here (no base) while the remote has
   * it: not a delete this tree can send (nothing says which version it deleted); said, not dropped.
   */
  unsyncedDeletes: string[];
}

export function plan(states: readonly PathState[], context: PlanContext): Plan {
  const out = emptyPlan();
  for (const state of states) planPath(state, context, out);
  guardDeletes(states, context, out);
  return out;
}

export function emptyPlan(): Plan {
  return {
    puts: [],
    deletes: [],
    copies: [],
    writes: [],
    removes: [],
    settles: [],
    conflicts: [],
    stillOpen: [],
    resolved: [],
    held: { remote: [], local: [], tripped: false },
    leftAlone: [],
    unsyncedDeletes: [],
  };
}

function planPath(state: PathState, context: PlanContext, out: Plan): void {
  const { path, base, local, remote } = state;
  const clash = local && !remote ? context.clash?.(path) : undefined;
  if (clash !== undefined) return planClash(state, clash, context, out);
  const decision = reconcile(base, local?.sha256 ?? null, remote?.sha256 ?? null);
  const open = context.open.get(path);
  const choice = context.resolve?.(path);
  if (choice && (open || decision.kind === "conflict")) return planResolution(state, choice, open, context, out);
  if (open && decision.kind !== "conflict") out.resolved.push(path);
  if (decision.kind === "in-sync") return void out.settles.push({ path, sha256: local?.sha256 ?? null, local });
  if (decision.kind === "conflict") return planConflict(state, context, out);
  if (!acts(context.mode, decision)) {
    if (state.evidence && local === null && base === null && remote !== null) out.unsyncedDeletes.push(path);
    return void out.leftAlone.push({ path, decision });
  }
  if (decision.kind === "push") {
    if (local) out.puts.push({ path, sha256: local.sha256, size: local.size, expect: decision.expect, from: path, local });
    else out.deletes.push({ path, expect: decision.expect });
  } else if (remote) {
    out.writes.push({ path, sha256: remote.sha256, size: remote.size, expectLocal: local, backup: false });
  } else if (local) {
    out.removes.push({ path, expectLocal: local });
  }
}

function planConflict(state: PathState, context: PlanContext, out: Plan): void {
  const { path, local, remote } = state;
  // A conflict has content on both sides (reconcile says so).
  const mine = local!;
  const theirs = remote!;
  if (forced(context, path)) {
    // Forced: mine in a push, theirs in a pull (the local file kept as a backup first).
    if (context.mode === "pull") out.writes.push({ path, sha256: theirs.sha256, size: theirs.size, expectLocal: mine, backup: true });
    else out.puts.push({ path, sha256: mine.sha256, size: mine.size, expect: theirs.sha256, from: path, local: mine });
    if (context.open.has(path)) out.resolved.push(path);
    return;
  }
  const open = context.open.get(path);
  // A pull never commits: a conflict it meets is recorded without a copy, for a command that writes.
  if (open && (open.copy !== undefined || context.mode === "pull")) {
    out.stillOpen.push({ path, remote: theirs.sha256 });
    // Later local edits update the same copy: never a copy per edit.
    if (open.copy !== undefined && open.copySha !== mine.sha256 && context.mode !== "pull") {
      out.copies.push({ path: open.copy, sha256: mine.sha256, size: mine.size, expect: open.copySha ?? null, from: path, local: mine });
    }
    return;
  }
  const unsynced = state.base === null;
  if (context.mode === "pull") return void out.conflicts.push({ path, local: mine.sha256, remote: theirs.sha256, unsynced });
  const copy = freeCopyPath(path, mine.sha256, context);
  out.conflicts.push({ path, local: mine.sha256, remote: theirs.sha256, copy, unsynced });
  out.copies.push({ path: copy, sha256: mine.sha256, size: mine.size, expect: null, from: path, local: mine });
}

/** A conflict ended as asked, whatever the table says of the path now (see Resolution). */
function planResolution(state: PathState, choice: Resolution, open: OpenConflict | undefined, context: PlanContext, out: Plan): void {
  const { path, local, remote } = state;
  if (open) out.resolved.push(path);
  if (choice === "both") {
    if (local) keepMineAside(state, local, open, context, out);
  } else if (open?.copy !== undefined) {
    out.deletes.push({ path: open.copy, expect: open.copySha ?? null });
  }
  const sha = (choice === "mine" ? local : remote)?.sha256 ?? null;
  if (sha === (local?.sha256 ?? null) && sha === (remote?.sha256 ?? null)) return void out.settles.push({ path, sha256: sha, local });
  if (choice === "mine") {
    if (local) out.puts.push({ path, sha256: local.sha256, size: local.size, expect: remote?.sha256 ?? null, from: path, local });
    else out.deletes.push({ path, expect: remote!.sha256 });
  } else if (remote) {
    out.writes.push({ path, sha256: remote.sha256, size: remote.size, expectLocal: local, backup: local !== null });
  } else if (local) {
    out.removes.push({ path, expectLocal: local });
  }
}

/** Both: the local version as a file of its own at the copy's path, committed there (unless it holds it already) and written here. */
function keepMineAside(state: PathState, mine: LocalFile, open: OpenConflict | undefined, context: PlanContext, out: Plan): void {
  const copy = open?.copy ?? freeCopyPath(state.path, mine.sha256, context);
  const held = open?.copy === undefined ? null : (open.copySha ?? null);
  if (held !== mine.sha256)
    out.puts.push({ path: copy, sha256: mine.sha256, size: mine.size, expect: held, from: state.path, local: mine });
  out.writes.push({ path: copy, sha256: mine.sha256, size: mine.size, expectLocal: null, backup: false });
}

/**
 * A local file where the remote holds a directory of that name, or a file above it: the server
 * would refuse it (409), so it is a conflict whose copy goes where it clashes with nothing: beside
 * the remote file above it (`x.conflict-…/y` for `x/y`), or beside the directory (`x.conflict-…`).
 * It stays open while the clash does; resolved as any conflict once the remote side gives way.
 */
function planClash(state: PathState, clash: string, context: PlanContext, out: Plan): void {
  const { path } = state;
  const mine = state.local!;
  const open = context.open.get(path);
  // A pull never commits: the clash is recorded without a copy, for a command that writes (as planConflict).
  if (open && (open.copy !== undefined || context.mode === "pull")) {
    out.stillOpen.push({ path, remote: null });
    if (open.copy !== undefined && open.copySha !== mine.sha256 && context.mode !== "pull") {
      out.copies.push({ path: open.copy, sha256: mine.sha256, size: mine.size, expect: open.copySha ?? null, from: path, local: mine });
    }
    return;
  }
  const unsynced = state.base === null;
  if (context.mode === "pull") return void out.conflicts.push({ path, local: mine.sha256, remote: null, unsynced, clash });
  const above = path.startsWith(`${clash}/`);
  const copy = above ? freeCopyPath(clash, mine.sha256, context, path.slice(clash.length)) : freeCopyPath(path, mine.sha256, context);
  out.conflicts.push({ path, local: mine.sha256, remote: null, copy, unsynced, clash });
  out.copies.push({ path: copy, sha256: mine.sha256, size: mine.size, expect: null, from: path, local: mine });
}

/**
 * A new copy's name, a second later while the remote holds that name already (a copy made in the
 * same second before a crash and changed since by someone else: expecting it absent would be
 * refused forever, simulation seed 3611).
 */
function freeCopyPath(path: string, sha256: string, context: PlanContext, under = ""): string {
  for (let at = context.now.getTime(); ; at += 1000) {
    // A clash's copy is a directory (`x.conflict-…/y`): the file under it is what may be taken (simulation seed 3439).
    const copy = conflictCopyPath(path, new Date(at), context.host, sha256) + under;
    if (!context.taken?.(copy)) return copy;
  }
}

function forced(context: PlanContext, path: string): boolean {
  return context.force?.(path) === true;
}

/**
 * Deletes found only by looking (a scan, a listing) that would take most of the project are held,
 * on each side; so are deletes held before. Measured as the net loss: deletes less the new files on
 * the same side, so `mv src lib` deletes nothing in the guard's eyes. Forced: none is held.
 */
function guardDeletes(states: readonly PathState[], context: PlanContext, out: Plan): void {
  const evidenced = new Set(states.filter((s) => s.evidence).map((s) => s.path));
  const isForced = (path: string) => forced(context, path);
  const localNew = out.puts.filter((p) => p.expect === null).length;
  const remoteNew = out.writes.filter((w) => w.expectLocal === null).length;
  const remoteSide = holdSide(
    out.deletes.map((d) => d.path),
    localNew,
    evidenced,
    isForced,
    context,
  );
  const localSide = holdSide(
    out.removes.map((r) => r.path),
    remoteNew,
    evidenced,
    isForced,
    context,
  );
  out.held = { remote: remoteSide.held, local: localSide.held, tripped: remoteSide.tripped || localSide.tripped };
  const heldRemote = new Set(remoteSide.held);
  const heldLocal = new Set(localSide.held);
  out.deletes = out.deletes.filter((d) => !heldRemote.has(d.path));
  out.removes = out.removes.filter((r) => !heldLocal.has(r.path));
}

function holdSide(
  deletes: string[],
  added: number,
  evidenced: ReadonlySet<string>,
  isForced: (path: string) => boolean,
  context: PlanContext,
): { held: string[]; tripped: boolean } {
  const unforced = deletes.filter((path) => !isForced(path));
  const found = unforced.filter((path) => !evidenced.has(path));
  const tripped = isMassDelete(found.length - added, context.baseFiles);
  const held = unforced.filter((path) => context.held.has(path) || (tripped && !evidenced.has(path)));
  return { held, tripped };
}
