import type { Ledger } from "../reconcile/ledger.js";
import type { Unsynced } from "./session-journal.js";

/** The end of a session in numbers: what the watcher and `push` list and decide the exit code on. */
export interface SyncResult {
  /** Commits made. */
  commits: number;
  /** File contents committed (a file committed three times counts three times). */
  pushed: number;
  /** Conflict copies committed (new and updated). */
  copies: number;
  /** Remote files deleted. */
  deleted: number;
  /** Files written here from the remote (two-way). */
  pulled: number;
  /** Local files deleted because the remote deleted them (two-way). */
  removed: number;
  /** Changes that needed no request: both sides already held that content. */
  unchanged: number;
  /** Not synced by rule: too large, a symlink, not a regular file. Final state per path. */
  skipped: { remote: string; reason: string }[];
  /** Not synced because something went wrong, or time ran out. Final state per path. */
  failed: { remote: string; reason: string }[];
  /** Open conflicts this session met: both versions kept, the local one in `copy`. */
  conflicts: { remote: string; copy?: string }[];
  /** Deletes the mass-delete guard holds (until --force). */
  held: { remote: string; reason: string }[];
  /** Entries this session wrote to the journal. */
  journaled: number;
  /** Why syncing stopped early (401/403/404/redirect), if it did. */
  stopped?: string;
  /** It stopped on a usage error (a project that does not exist): exit code 2. */
  usage?: true;
}

/** The final state per path: an unsynced path (time ran out, syncing stopped) wins over its last outcome. */
export function summarize(ledger: Ledger, unsynced: Unsynced, journaled: number, stopped: string | undefined): SyncResult {
  const result: SyncResult = {
    commits: ledger.commits,
    pushed: ledger.pushed,
    copies: ledger.copies,
    deleted: ledger.deleted,
    pulled: ledger.pulled,
    removed: ledger.removed,
    unchanged: ledger.unchanged,
    skipped: [],
    failed: [],
    conflicts: [],
    held: [],
    journaled,
  };
  for (const [remote, outcome] of ledger.unsettled()) {
    if (unsynced.has(remote)) continue;
    if (outcome.status === "skipped") result.skipped.push({ remote, reason: outcome.reason });
    else if (outcome.status === "failed") result.failed.push({ remote, reason: outcome.reason });
    else if (outcome.status === "conflict") result.conflicts.push({ remote, copy: outcome.copy });
    else result.held.push({ remote, reason: outcome.reason });
  }
  for (const [remote, { reason }] of unsynced) result.failed.push({ remote, reason });
  if (stopped) result.stopped = stopped;
  return result;
}

/** Everything synced: nothing failed, skipped, in conflict or held, nothing journaled, not stopped. */
export function allSynced(result: SyncResult): boolean {
  return (
    result.failed.length + result.skipped.length + result.conflicts.length + result.held.length + result.journaled === 0 && !result.stopped
  );
}
