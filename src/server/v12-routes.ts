// The v1.2 routes of docs/api.md that v1 had no form of: GET /commits (with its long poll),
// GET and POST /api/projects.

import type { IncomingMessage, ServerResponse } from "node:http";
import { API_ERRORS, API_VERSION } from "../api/types.js";
import type { ProjectAccess } from "./access.js";
import type { Context, RouteContext } from "./context.js";
import { HttpError, readJson, sendJson } from "./http.js";
import { queryCommits } from "./routes/table.js";
import { validateProjectId } from "../api/validate.js";

/**
 * `GET /commits?since=N&limit=M[&path=P][&wait=ms]`. With `wait`, answers as soon as the head is
 * past N, else at the end of the wait (or at once when the server closes). A client that goes
 * away ends its wait, and gets no answer; a token revoked or expired meanwhile gets 401 (ProjectAccess).
 */
export async function getCommits(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const query = queryCommits(req.url ?? "");
  if (query.wait > 0 && !ctx.closing?.aborted) {
    // One signal for both ends of a wait; a dependent signal per wait on the server's lifelong one
    // (AbortSignal.any) would pile up, so the two are wired by hand and unwired after.
    let gone = false;
    const stop = new AbortController();
    const onGone = () => {
      gone = true;
      stop.abort();
    };
    const onClosing = () => stop.abort();
    res.once("close", onGone);
    ctx.closing?.addEventListener("abort", onClosing, { once: true });
    try {
      await project.waitForCommit(query.since, query.wait, stop.signal);
    } finally {
      res.off("close", onGone);
      ctx.closing?.removeEventListener("abort", onClosing);
    }
    if (gone) return;
  }
  const { since, limit, path } = query;
  sendJson(res, 200, { ...(await project.commits({ since, limit, path, maxBytes: ctx.limits.maxJsonBytes })), api: API_VERSION });
}

/** `GET /api/projects`: the projects `visible` lets the caller see. */
export async function listProjects(res: ServerResponse, ctx: Context, visible: (projectId: string) => boolean): Promise<void> {
  const projects = await ctx.store.projects();
  sendJson(res, 200, { projects: projects.filter((project) => visible(project.id)) });
}

/** `POST /api/projects` `{ "id": "..." }`: 201 with the new project, 409 `exists`. */
export async function createProject(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const body = (await readJson(req, ctx.limits.maxJsonBytes)) as { id?: unknown } | null;
  if (typeof body !== "object" || body === null || typeof body.id !== "string") {
    throw new HttpError(400, API_ERRORS.invalidRequest, 'body must be { "id": "<project id>" }');
  }
  const badId = validateProjectId(body.id);
  if (badId) throw new HttpError(400, "invalid_project_id", badId);
  const created = await ctx.store.createProject(body.id);
  if (!created) throw new HttpError(409, API_ERRORS.exists, `project ${JSON.stringify(body.id)} exists already`);
  sendJson(res, 201, created);
}
