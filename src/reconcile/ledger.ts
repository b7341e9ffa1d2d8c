/**
 * What became of every path a session (or a command) dealt with, and the counts its summary
 * prints. The final outcome per path wins: a later success clears an earlier failure. The journal
 * (sync/session-journal.ts) and the exit code are decided from it.
 */

export type PathOutcome =
  | { status: "synced"; /** when the synced content was read (ms) */ at: number }
  | { status: "skipped"; reason: string; journal: boolean; local: string }
  | { status: "failed"; reason: string; local: string }
  /** A conflict: both versions kept (the local one in `copy`, once a command that writes committed it), said once; exit code 1. */
  | { status: "conflict"; copy?: string; local: string }
  /** A delete the mass-delete guard refused: kept until --force; exit code 1. */
  | { status: "held"; reason: string; local: string };

export class Ledger {
  commits = 0;
  /** File contents committed (a path committed three times counts three). */
  pushed = 0;
  /** Remote files deleted. */
  deleted = 0;
  /** Files written here from the remote. */
  pulled = 0;
  /** Local files deleted because the remote deleted them. */
  removed = 0;
  /** Paths that needed nothing: both sides already equal. */
  unchanged = 0;
  /** Conflict copies committed (new and updated). */
  copies = 0;
  readonly outcomes = new Map<string, PathOutcome>();

  set(path: string, outcome: PathOutcome): void {
    this.outcomes.set(path, outcome);
  }

  /** Paths whose final outcome is not "synced". */
  unsettled(): [string, Exclude<PathOutcome, { status: "synced" }>][] {
    return [...this.outcomes].filter(
      (entry): entry is [string, Exclude<PathOutcome, { status: "synced" }>] => entry[1].status !== "synced",
    );
  }
}
