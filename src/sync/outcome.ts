import type { SyncEngine } from "./engine.js";
import type { Unsynced } from "./session-journal.js";

/** The end of a session in numbers: what the watcher and `push` list and decide the exit code on. */
export interface SyncResult {
  /** Commits made. */
  commits: number;
  /** File contents committed (a file committed three times counts three times). */
  pushed: number;
  /** Remote files deleted. */
  deleted: number;
  /** Changes that needed no request: the remote already had that content, or nothing to delete. */
  unchanged: number;
  /** Not synced by rule: too large, a symlink, not a regular file. Final state per path. */
  skipped: { remote: string; reason: string }[];
  /** Not synced because something went wrong, or time ran out. Final state per path. */
  failed: { remote: string; reason: string }[];
  /** Entries this session wrote to the journal. */
  journaled: number;
  /** Why syncing stopped early (401/403/404/redirect), if it did. */
  stopped?: string;
}

/** The final state per path: an unsynced path (time ran out, syncing stopped) wins over its last outcome. */
export function summarize(engine: SyncEngine, unsynced: Unsynced, journaled: number, stopped: string | undefined): SyncResult {
  const skipped: SyncResult["skipped"] = [];
  const failed: SyncResult["failed"] = [];
  for (const [remote, outcome] of engine.outcomes) {
    if (unsynced.has(remote)) continue;
    if (outcome.status === "skipped") skipped.push({ remote, reason: outcome.reason });
    if (outcome.status === "failed") failed.push({ remote, reason: outcome.reason });
  }
  for (const [remote, { reason }] of unsynced) failed.push({ remote, reason });
  const result: SyncResult = {
    commits: engine.commits,
    pushed: engine.pushed,
    deleted: engine.deleted,
    unchanged: engine.unchanged,
    skipped,
    failed,
    journaled,
  };
  if (stopped) result.stopped = stopped;
  return result;
}
