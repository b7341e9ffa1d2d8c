import type { Reporter } from "../report/reporter.js";
import { stateFileExists } from "../state/state-dir.js";
import type { Ledger } from "../reconcile/ledger.js";
import { JOURNAL_NAME, journalPath, updateJournal, type JournalEntry, type SyncedPath } from "./journal.js";
import { errorText } from "../errors/text.js";

/**
 * The session's side of the journal: what this session could not sync is added (the newest
 * wins), and at the end the entries its successes settle are cleared.
 */

/** Not synced because time ran out or syncing stopped: remote path → the local file and why. */
export type Unsynced = Map<string, { local: string; reason: string }>;

export interface SessionJournalOptions {
  apiUrl: string;
  projectId: string;
  root: string;
  report: Reporter;
  ledger: Ledger;
  unsynced: Unsynced;
}

export interface SessionJournal {
  /** Journals what is not synced; `final` also clears entries settled by this session. */
  write(final: boolean): Promise<void>;
  /** Distinct paths this session has journaled so far. */
  readonly count: number;
  /** Says once, as an error, that the journal could not be written. */
  failed(error: unknown): void;
}

export function createSessionJournal(options: SessionJournalOptions): SessionJournal {
  const { apiUrl, projectId, root, ledger, unsynced } = options;
  const journaled = new Set<string>();

  const entry = (path: string, local: string, reason: string, time: string): JournalEntry => ({
    apiUrl,
    projectId,
    path,
    local,
    reason,
    time,
  });

  function unsyncedEntries(time: string): JournalEntry[] {
    const add: JournalEntry[] = [];
    for (const [remote, outcome] of ledger.outcomes) {
      if (outcome.status === "failed" || (outcome.status === "skipped" && outcome.journal)) {
        if (!unsynced.has(remote)) add.push(entry(remote, outcome.local, outcome.reason, time));
      }
    }
    for (const [remote, { local, reason }] of unsynced) add.push(entry(remote, local, reason, time));
    return add;
  }

  function syncedPaths(): SyncedPath[] {
    const synced: SyncedPath[] = [];
    for (const [remote, outcome] of ledger.outcomes) {
      if (outcome.status === "synced" && !unsynced.has(remote)) synced.push({ apiUrl, projectId, path: remote, at: outcome.at });
    }
    return synced;
  }

  return {
    get count() {
      return journaled.size;
    },

    async write(final) {
      const add = unsyncedEntries(new Date().toISOString());
      const synced = final ? syncedPaths() : [];
      if (add.length === 0 && synced.length === 0) return;
      // Only successes to clear: without a journal of ours (a symlink is never ours) there is nothing to do.
      if (add.length === 0 && !(await stateFileExists(root, JOURNAL_NAME))) return;
      await updateJournal(root, { add, synced }, options.report);
      for (const e of add) journaled.add(e.path);
    },

    failed(error) {
      options.report.error("journal-failed", `could not write the journal ${journalPath(root)}: ${errorText(error)}`);
    },
  };
}
