// `GET` and `POST /api/projects` of docs/api.md.

import type { IncomingMessage, ServerResponse } from "node:http";
import { API_ERRORS } from "../../api/types.js";
import { validateProjectId } from "../../api/validate.js";
import type { Context } from "../context.js";
import { HttpError, readJson, sendJson } from "../http.js";

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
