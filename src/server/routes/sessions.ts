// The v1.1 transcript routes (docs/api.md): PUT/GET /sessions/{id}/events, GET /sessions.

import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { ProjectAccess } from "../access.js";
import type { RouteContext } from "../context.js";
import { HttpError, readAll, sendJson } from "../http.js";
import { queryOffset } from "./table.js";

export async function putEvents(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RouteContext,
  project: ProjectAccess,
  sessionId: string,
): Promise<void> {
  const offset = queryOffset(req.url ?? "");
  if (offset === undefined) throw new HttpError(400, "invalid_request", "an ?offset=<byte offset> parameter is required");
  const body = await readAll(req, ctx.limits.maxEventsBytes);
  const outcome = await project.appendEvents(sessionId, offset, body);
  if (outcome.kind === "offset_mismatch") {
    const message = `the transcript holds ${outcome.length} bytes; send from there`;
    throw new HttpError(409, "offset_mismatch", message, { length: outcome.length });
  }
  sendJson(res, 200, { length: outcome.length });
}

/** The transcript as long as it is when asked, streamed as it is read. */
export async function getEvents(res: ServerResponse, project: ProjectAccess, sessionId: string, headOnly: boolean): Promise<void> {
  const transcript = await project.readEvents(sessionId);
  if (!transcript) throw new HttpError(404, "session_not_found", `no transcript for session ${sessionId}`);
  res.writeHead(200, {
    "content-type": "application/x-ndjson",
    "content-length": String(transcript.size),
    "cache-control": "no-store",
  });
  if (headOnly) return void res.end();
  // A client that goes away mid-download is not a server error.
  await pipeline(transcript.chunks(), res).catch(() => res.destroy());
}

export async function listSessions(res: ServerResponse, project: ProjectAccess): Promise<void> {
  sendJson(res, 200, { sessions: await project.sessions() });
}
