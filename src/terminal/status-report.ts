import type { OpenConflict } from "../reconcile/base.js";
import { RESOLVE_HINT } from "../reconcile/conflict-copy.js";
import type { Plan } from "../reconcile/plan.js";

/**
 * What `uspark status` says, decided from a dry run's plan: pure, no I/O. Each path not in sync gets
 * one state; the JSON shape is versioned (`format`) and documented in docs/commands.md#status---json.
 */

export type PathStatus =
  | "modified-here"
  | "added-here"
  | "deleted-here"
  | "modified-remotely"
  | "added-remotely"
  | "deleted-remotely"
  | "conflict"
  | "held-delete"
  | "pending"
  /** A remote path this client refuses (a file and a directory under one name, a hostile listing): never synced. */
  | "refused";

export interface StatusEntry {
  path: string;
  status: PathStatus;
  /** A conflict's copy: where your version was (or will be) committed. */
  copy?: string;
}

export interface StatusReport {
  format: 1;
  projectId: string;
  apiUrl: string;
  root: string;
  /** The remote version the last sync here reached; the remote's version now. */
  baseVersion: number;
  remoteVersion: number;
  inSync: boolean;
  paths: StatusEntry[];
}

export interface StatusFacts {
  plan: Plan;
  /** Paths the base holds (an absent base entry makes a change an addition). */
  inBase: (path: string) => boolean;
  openConflicts: ReadonlyMap<string, OpenConflict>;
  /** Paths journaled by an earlier run and not synced since. */
  pending: readonly string[];
  /** Remote paths refused (see RemoteView.refused). */
  refused?: readonly string[];
}

/** One entry per path that is not in sync, sorted by path; a path is listed once, its strongest state winning. */
export function statusEntries({ plan, inBase, openConflicts, pending, refused = [] }: StatusFacts): StatusEntry[] {
  const byPath = new Map<string, StatusEntry>();
  const add = (entry: StatusEntry) => {
    if (!byPath.has(entry.path)) byPath.set(entry.path, entry);
  };
  for (const path of refused) add({ path, status: "refused" });
  for (const c of plan.conflicts) add({ path: c.path, status: "conflict", copy: c.copy });
  for (const { path } of plan.stillOpen) add({ path, status: "conflict", copy: openConflicts.get(path)?.copy });
  for (const path of [...plan.held.remote, ...plan.held.local]) add({ path, status: "held-delete" });
  for (const p of plan.puts) add({ path: p.path, status: inBase(p.path) ? "modified-here" : "added-here" });
  for (const d of plan.deletes) add({ path: d.path, status: "deleted-here" });
  for (const { path, decision } of plan.leftAlone) {
    if (decision.kind !== "pull") continue;
    add({ path, status: decision.sha === null ? "deleted-remotely" : inBase(path) ? "modified-remotely" : "added-remotely" });
  }
  for (const path of pending) add({ path, status: "pending" });
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Two letters per path, as in `git status --short`: what changed here, what changed remotely. */
const SHORT: Record<PathStatus, string> = {
  "modified-here": "M ",
  "added-here": "A ",
  "deleted-here": "D ",
  "modified-remotely": " M",
  "added-remotely": " A",
  "deleted-remotely": " D",
  conflict: "UU",
  "held-delete": "H ",
  pending: "P ",
  refused: "! ",
};

export function shortStatus(report: StatusReport): string {
  return report.paths.map((e) => `${SHORT[e.status]} ${e.path}\n`).join("");
}

const SECTIONS: { title: string; states: Partial<Record<PathStatus, string>> }[] = [
  {
    title: "Changes here (uspark push sends them):",
    states: { "modified-here": "modified", "added-here": "new", "deleted-here": "deleted" },
  },
  {
    title: "Changes remotely (uspark pull takes them):",
    states: { "modified-remotely": "modified", "added-remotely": "new", "deleted-remotely": "deleted" },
  },
  { title: `Conflicts (${RESOLVE_HINT}):`, states: { conflict: "both changed" } },
  { title: "Deletes held by the mass-delete guard (push or pull --force carries them out):", states: { "held-delete": "held" } },
  { title: "Journaled by an earlier run (uspark push --pending retries them):", states: { pending: "pending" } },
  {
    title: "Refused: never synced (a file and a directory under one name on the remote: remove one there):",
    states: { refused: "refused" },
  },
];

export function longStatus(report: StatusReport): string {
  const lines = [
    `project ${report.projectId} on ${report.apiUrl}: synced here up to version ${report.baseVersion}, remote at version ${report.remoteVersion}`,
  ];
  for (const { title, states } of SECTIONS) {
    const entries = report.paths.filter((e) => states[e.status] !== undefined);
    if (entries.length === 0) continue;
    lines.push(title);
    for (const e of entries) lines.push(`  ${`${states[e.status]}:`.padEnd(14)}${e.path}${e.copy ? ` (yours: ${e.copy})` : ""}`);
  }
  lines.push(report.inSync ? "in sync: nothing to push or pull" : `${report.paths.length} not in sync`);
  return lines.join("\n") + "\n";
}
