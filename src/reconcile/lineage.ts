import { ApiError } from "../transfer/api-error.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { Reporter } from "../report/reporter.js";
import type { RemoteView } from "./remote-view.js";

/**
 * Does the server's history extend the one this tree last synced (docs/api.md, v1.3)? The base
 * keeps the last (version, chain hash) seen; a server restored from a backup, rolled back or
 * forked has an older head, or another chain hash at that version. Such a server is refused by
 * every command before anything is read or written here: its older content would otherwise look
 * like remote changes and be pulled over the newer work that only this tree still holds.
 */

/** The way out, named in the refusal (README, docs/api.md). */
export const ONTO_REWOUND = "uspark push --onto-rewound";

export interface HistoryPoint {
  version: number;
  /** Unknown: a v1.2 server, or a state file from before v1.3. */
  chain?: string;
}

export type Lineage =
  | { kind: "extends" }
  /** A v1.2 server: no chain hash to compare (only a head older than the recorded one is seen). */
  | { kind: "unchecked" }
  /** The head is past the recorded version: the server's chain hash at that version is needed. */
  | { kind: "ask"; version: number }
  | { kind: "rewound"; why: string };

/**
 * The pure decision. `chainThen`: the server's chain hash at the recorded version (asked for when
 * the verdict was "ask"; undefined when it could not say).
 */
export function judgeLineage(recorded: HistoryPoint, head: HistoryPoint, chainThen?: string): Lineage {
  if (recorded.version === 0) return { kind: "extends" };
  if (head.version < recorded.version)
    return { kind: "rewound", why: `its head is v${head.version}, older than v${recorded.version}, which this tree last synced` };
  if (head.chain === undefined) return { kind: "unchecked" };
  if (recorded.chain === undefined) return { kind: "extends" };
  if (head.version === recorded.version) {
    return head.chain === recorded.chain
      ? { kind: "extends" }
      : { kind: "rewound", why: `its v${head.version} is not the v${recorded.version} this tree last synced (another history)` };
  }
  if (chainThen === undefined) return { kind: "ask", version: recorded.version };
  return chainThen === recorded.chain
    ? { kind: "extends" }
    : { kind: "rewound", why: `its history up to its head v${head.version} does not hold the v${recorded.version} this tree last synced` };
}

/** The refusal: fatal (no retry can fix it), said by every command as one error. */
export class RewoundError extends ApiError {
  constructor(why: string) {
    super(
      `the server's history does not extend the one this tree last synced: ${why}. It was restored from a backup, rolled back, or is another server. ` +
        `Nothing was read or written here. To commit this tree's files onto the server as it is now and take its history: ${ONTO_REWOUND}`,
      { code: "rewound", fatal: true },
    );
  }
}

/**
 * Checks the view's first listing against the recorded point; throws RewoundError unless
 * `accept`. Returns whether the server was found rewound (and accepted). A v1.2 server is said
 * once (its history cannot be checked).
 */
export async function checkLineage(
  recorded: HistoryPoint,
  parts: { view: RemoteView; remote: ProjectRemote; report: Reporter },
  signal: AbortSignal,
  accept = false,
): Promise<boolean> {
  const { view, remote, report } = parts;
  const head = { version: view.version, chain: view.chain };
  let verdict = judgeLineage(recorded, head);
  if (verdict.kind === "ask") {
    const feed = await remote.feed(verdict.version - 1, { limit: 1 }, signal);
    const then = feed.commits[0]?.version === verdict.version ? feed.commits[0].chain : undefined;
    verdict = then === undefined ? { kind: "unchecked" } : judgeLineage(recorded, head, then);
  }
  if (verdict.kind === "unchecked" && view.api === "1.2") {
    report.warnOnce(
      "lineage",
      "old-api",
      "the server speaks API 1.2: it keeps no history hash, so a server restored from an older backup would go unnoticed (upgrade it to 1.3)",
    );
  }
  if (verdict.kind !== "rewound") return false;
  if (!accept) throw new RewoundError(verdict.why);
  return true;
}
