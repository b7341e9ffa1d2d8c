// HTTP handling of the project API (docs/api.md): auth, routing, dispatch, error answers.

import type { IncomingMessage, ServerResponse } from "node:http";
import { Door, type ProjectAccess } from "./access.js";
import { bearerToken, mayAccess, type Authority, type Principal } from "./authority.js";
import { getBlobs, postBlobs } from "./routes/blobs-batch.js";
import type { Context } from "./context.js";
import type { DeviceFlow } from "./device.js";
import { postDeviceCode, postDeviceToken } from "./routes/devices.js";
import { isApiUrl } from "./host-check.js";
import { HttpError, sendError, sendJson } from "./http.js";
import { isPublicRoute, needOf, parseRoute, type Route } from "./routes/table.js";
import { getEvents, listSessions, putEvents } from "./routes/sessions.js";
import { API_ERRORS } from "../api/types.js";
import { ProjectNotFoundError, ProjectUnavailableError, StoreUnavailableError } from "./store.js";
import { getBlob, putBlob } from "./routes/blobs.js";
import { commit, getCommits } from "./routes/commits.js";
import { getFiles } from "./routes/files.js";
import { createProject, listProjects } from "./routes/projects.js";

export type { CommitEvent, Limits } from "./context.js";

export interface AppOptions extends Context {
  authority: Authority;
  /** The device logins of `uspark login`: its two API routes, and the web view's /device page. */
  devices: DeviceFlow;
  onError?: (error: unknown) => void;
  /** The web view (docs/web-view.md): every URL outside /api/ and the probes goes to it. */
  web?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

/** Seconds a client should wait before retrying when the store is unreachable. */
const RETRY_AFTER_SECONDS = "1";

export function createHandler(options: AppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const api = new Api(options);
  return (req, res) => void api.answer(req, res);
}

/** One method per step of an API request: who asks, which route, may they (the door), then the route's own code. */
class Api {
  private readonly door: Door;

  constructor(private readonly options: AppOptions) {
    this.door = new Door(options.store, options.authority);
  }

  async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.handle(req, res);
    } catch (error) {
      const answer = toHttpError(error);
      if (answer.code === "internal") this.options.onError?.(error);
      if (res.headersSent) res.destroy();
      else sendError(res, answer);
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { options } = this;
    const url = req.url ?? "/";
    // The pages have their own sign-in (a session cookie), not the API's bearer token.
    if (options.web && !isApiUrl(url)) return options.web(req, res);
    const method = req.method ?? "GET";
    // Every request but the public ones shows a credential first: unknown routes are 401 too.
    const credential = bearerToken(req.headers.authorization);
    const principal = isPublicRoute(url) ? undefined : await this.door.principal(credential);
    const route = parseRoute(url);
    const need = needOf(route.kind, method);
    if (route.kind === "healthz") return sendJson(res, 200, { status: "ok" });
    if (route.kind === "readyz") return this.readyz(res);
    if (route.kind === "deviceCode") return postDeviceCode(req, res, options.devices);
    if (route.kind === "deviceToken") return postDeviceToken(req, res, options.devices);
    if (route.kind === "projects") return this.projects(req, res, principal!);
    // Every project route, blobs included: a mistyped id is said at once, whatever the request.
    const project = await this.door.open(credential, principal!, route.projectId, need === "write" ? "write" : "read");
    return this.dispatch(req, res, route, project, method === "HEAD");
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, route: ProjectRoute, project: ProjectAccess, head: boolean): Promise<void> {
    const { options } = this;
    switch (route.kind) {
      case "files":
        return getFiles(req, res, project);
      case "blob":
        return req.method === "PUT" ? putBlob(req, res, options, project, route.sha256) : getBlob(res, project, route.sha256, head);
      case "blobs":
        return postBlobs(req, res, options, project);
      case "blobsGet":
        return getBlobs(req, res, options, project);
      case "commits":
        return req.method === "POST" ? commit(req, res, options, project) : getCommits(req, res, options, project);
      case "sessions":
        return listSessions(res, project);
      case "events":
        return req.method === "PUT"
          ? putEvents(req, res, options, project, route.sessionId)
          : getEvents(res, project, route.sessionId, head);
    }
  }

  private projects(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> {
    const { options } = this;
    if (needOf("projects", req.method ?? "GET") !== "admin") return listProjects(res, options, (id) => mayAccess(principal, id, "read"));
    if (principal.kind !== "admin") throw new HttpError(403, "forbidden", "only the admin token may create projects");
    return createProject(req, res, options);
  }

  private async readyz(res: ServerResponse): Promise<void> {
    const reason = await this.options.store.notReady();
    if (reason) throw new HttpError(503, "not_ready", reason, {}, { "retry-after": RETRY_AFTER_SECONDS });
    sendJson(res, 200, { status: "ready" });
  }
}

type ProjectRoute = Exclude<Route, { kind: "healthz" | "readyz" | "projects" | "deviceCode" | "deviceToken" }>;

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StoreUnavailableError) {
    return new HttpError(503, "unavailable", error.message, {}, { "retry-after": RETRY_AFTER_SECONDS });
  }
  if (error instanceof ProjectUnavailableError) return new HttpError(500, "project_unavailable", error.message);
  if (error instanceof ProjectNotFoundError) return new HttpError(404, API_ERRORS.projectNotFound, error.message);
  return new HttpError(500, "internal", "internal server error");
}
