import type { Change } from "../api/types.js";
import type { Reporter } from "../report/reporter.js";
import { ApiError } from "../transfer/api-error.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { BaseKeeper } from "./base-keeper.js";
import type { Intent } from "./state-store.js";
import type { RemoteView } from "./remote-view.js";

/**
 * Settles the intents a process that is gone left (base-keeper.ts writes one before each commit):
 * each commit is sent again under its own Idempotency-Key. The server answers a key it applied
 * with the first answer and applies nothing twice (docs/api.md); a commit that never arrived is
 * applied now, on its expectations, or refused with nothing applied. Either way the base takes the
 * answer, so a crash at any point leaves the old base or the new one, never a conflict with this
 * machine's own commit. A server that cannot be asked now leaves the intent for the next command.
 *
 * The listing comes first: the server's API decides whether a replay is checked. A server older
 * than API 1.2 has no conditional commits, so a commit that never arrived would be applied over
 * whatever another writer committed since: there an intent is sent again only while each of its
 * paths holds what it expected or what it sent (see `changedSince`); else it is not sent, said once,
 * and its paths are decided again as any change (a conflict copy where both sides changed).
 */
export async function settleIntents(
  base: BaseKeeper,
  remote: ProjectRemote,
  view: RemoteView,
  report: Reporter,
  signal: AbortSignal,
): Promise<void> {
  // The API first (the view's listing); without a feed, a listing of now, as before any commit there.
  if (!view.isLoaded) await view.ensure(signal);
  else if (view.api !== "1.2") await view.refresh(signal);
  let applied = 0;
  for (const intent of [...base.openIntents]) {
    const unsafe = view.api === "1.2" ? undefined : changedSince(intent.changes, (path) => view.get(path)?.sha256 ?? null);
    if (unsafe !== undefined) {
      base.settleIntent(intent, false);
      report.warn(
        "intent",
        `the commit of an earlier run (key ${intent.key}) was not sent again: ${unsafe} changed on the server since, which speaks an API older than 1.2 (no conditional commits); decided again as any change`,
        { key: intent.key, path: unsafe },
      );
      continue;
    }
    if (await replay(intent, base, remote, report, signal)) applied++;
  }
  // What a replay applied now is not in the listing taken before it.
  if (applied > 0) await view.refresh(signal);
}

/** Sends the intent's commit again under its key; whether the server answered it applied. */
async function replay(intent: Intent, base: BaseKeeper, remote: ProjectRemote, report: Reporter, signal: AbortSignal): Promise<boolean> {
  try {
    await remote.commit(intent.changes, intent.source, intent.key, signal);
    base.settleIntent(intent, true);
    return true;
  } catch (error) {
    if (!(error instanceof ApiError) || error.fatal || signal.aborted) throw error;
    const refused = error.status !== undefined && error.status >= 400 && error.status < 500;
    if (refused) base.settleIntent(intent, false);
    report.debug(
      "intent",
      `the commit of an earlier run (key ${intent.key}) ${refused ? "was not applied" : "could not be settled now"}: ${error.message}`,
      { key: intent.key },
    );
    return false;
  }
}

/**
 * Pure: the first path of an unchecked replay that would overwrite another writer's commit (it
 * holds neither what the change expected nor what it sent), or undefined when none would. A
 * change without an expectation cannot be checked: it counts as one that would.
 */
export function changedSince(changes: readonly Change[], remoteHash: (path: string) => string | null): string | undefined {
  for (const change of changes) {
    const now = remoteHash(change.path);
    const sent = change.op === "put" ? change.sha256 : null;
    if (now === sent) continue;
    if (change.expect === undefined || now !== change.expect) return change.path;
  }
  return undefined;
}
