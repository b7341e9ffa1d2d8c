// /p/{id}/live?since=V[&session=S&length=L]: the long poll of a live page (assets' live.js). Answers
// {"changed": true} as soon as the project's head is past V (or session S's transcript is longer
// than L), else {"changed": false} after LIVE_WAIT_MS; at once when the server closes.

import type { ProjectAccess } from "../../access.js";
import { sendJson } from "../../http.js";
import { checkIdentifier } from "../../identifiers.js";
import type { Visit, WebContext } from "../context.js";
import { SECURITY_HEADERS } from "../layout.js";
import { intParam } from "./project-nav.js";

export const LIVE_WAIT_MS = 25_000;
/** How often a transcript's length is looked at while waiting (commits wake the wait at once). */
const TRANSCRIPT_LOOK_MS = 1000;

export async function liveAnswer(visit: Visit, ctx: WebContext, project: ProjectAccess): Promise<void> {
  const since = intParam(visit.url, "since", 0);
  const session = visit.url.searchParams.get("session");
  // Checked before any wait: a 400 at once, never a path built from it.
  const sessionId = session === null ? undefined : checkIdentifier("session", session);
  const length = intParam(visit.url, "length", 0);
  const stop = new AbortController();
  const onStop = () => stop.abort();
  visit.res.once("close", onStop);
  ctx.closing?.addEventListener("abort", onStop, { once: true });
  // A page's next wait may come on a kept-alive connection after the server began closing.
  if (ctx.closing?.aborted) stop.abort();
  try {
    const changed = await waitForChange(project, since, sessionId, length, stop.signal);
    // Once closing, the connection goes with the answer: the page's next wait cannot hold the server open.
    const headers = ctx.closing?.aborted ? { ...SECURITY_HEADERS, connection: "close" } : { ...SECURITY_HEADERS };
    if (!visit.res.destroyed) sendJson(visit.res, 200, { changed }, headers);
  } finally {
    visit.res.off("close", onStop);
    ctx.closing?.removeEventListener("abort", onStop);
  }
}

/** The session's credential is asked again at each look (ProjectAccess.waitForCommit): a revoke ends the wait with 401. */
async function waitForChange(
  project: ProjectAccess,
  since: number,
  sessionId: string | undefined,
  length: number,
  signal: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + LIVE_WAIT_MS;
  do {
    const slice = sessionId === undefined ? LIVE_WAIT_MS : TRANSCRIPT_LOOK_MS;
    if (await project.waitForCommit(since, Math.min(slice, deadline - Date.now()), signal)) return true;
    if (sessionId !== undefined && ((await project.readEvents(sessionId))?.size ?? 0) > length) return true;
  } while (!signal.aborted && Date.now() < deadline);
  return false;
}
