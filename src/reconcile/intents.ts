import type { Reporter } from "../report.js";
import { ApiError } from "../transfer/api-error.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { BaseKeeper } from "./base-keeper.js";
import type { RemoteView } from "./remote-view.js";

/**
 * Settles the intents a process that is gone left (base-keeper.ts writes one before each commit):
 * each commit is sent again under its own Idempotency-Key. The server answers a key it applied
 * with the first answer and applies nothing twice (docs/api.md); a commit that never arrived is
 * applied now, on its expectations, or refused with nothing applied. Either way the base takes the
 * answer, so a crash at any point leaves the old base or the new one, never a conflict with this
 * machine's own commit. A server that cannot be asked now leaves the intent for the next command.
 */
export async function settleIntents(base: BaseKeeper, remote: ProjectRemote, view: RemoteView, report: Reporter, signal: AbortSignal): Promise<void> {
  let applied = 0;
  for (const intent of [...base.openIntents]) {
    try {
      await remote.commit(intent.changes, intent.source, intent.key, signal);
      base.settleIntent(intent, true);
      applied++;
    } catch (error) {
      if (!(error instanceof ApiError) || error.fatal || signal.aborted) throw error;
      const refused = error.status !== undefined && error.status >= 400 && error.status < 500;
      if (refused) base.settleIntent(intent, false);
      report.debug("intent", `the commit of an earlier run (key ${intent.key}) ${refused ? "was not applied" : "could not be settled now"}: ${error.message}`, { key: intent.key });
    }
  }
  // What a replay applied now is not in the listing taken before it.
  if (applied > 0) await view.refresh(signal);
}
