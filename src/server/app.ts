// HTTP handling of the project API (docs/api.md): auth, routing, dispatch, error answers.

import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken, isAdmin, mayAccess, type Authority, type Principal } from "./authority.js";
import { getBlobs, postBlobs } from "./batch-routes.js";
import type { Context } from "./context.js";
import type { DeviceFlow } from "./device.js";
import { postDeviceCode, postDeviceToken } from "./device-routes.js";
import { isApiUrl } from "./host-check.js";
import { HttpError, sendError, sendJson } from "./http.js";
import { ALLOWED, isPublicRoute, parseRoute, type Route } from "./routes.js";
import { getEvents, listSessions, putEvents } from "./session-routes.js";
import { API_ERRORS } from "../api/types.js";
import { ProjectNotFoundError, ProjectUnavailableError, StoreUnavailableError } from "./store.js";
import { commit, getBlob, getFiles, putBlob } from "./v1-routes.js";
import { createProject, getCommits, listProjects } from "./v12-routes.js";
import { isSha256, validateProjectId, validateSessionId } from "../api/validate.js";

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

/** One method per step of an API request: who asks, which route, may they, then the route's own code. */
class Api {
  constructor(private readonly options: AppOptions) {}

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
    const isPublic = isPublicRoute(url);
    const principal = isPublic ? undefined : await options.authority.identify(bearerToken(req.headers.authorization));
    if (!isPublic && !principal) {
      throw new HttpError(401, "unauthorized", "missing, wrong, revoked or expired bearer token", {}, {
        "www-authenticate": 'Bearer realm="uspark"',
      });
    }
    const route = parseRoute(url);
    const method = req.method ?? "GET";
    const allowed = ALLOWED[route.kind];
    if (!allowed.includes(method)) {
      throw new HttpError(405, "method_not_allowed", `${method} is not allowed here`, {}, { allow: allowed.join(", ") });
    }
    if (route.kind === "healthz") return sendJson(res, 200, { status: "ok" });
    if (route.kind === "readyz") return this.readyz(res);
    if (route.kind === "deviceCode") return postDeviceCode(req, res, options.devices);
    if (route.kind === "deviceToken") return postDeviceToken(req, res, options.devices);
    if (route.kind === "projects") return this.projects(req, res, principal!);
    await this.checkProject(route, method, principal!);
    return this.dispatch(req, res, route, method === "HEAD");
  }

  private async checkProject(route: ProjectRoute, method: string, principal: Principal): Promise<void> {
    const badId = validateProjectId(route.projectId);
    if (badId) throw new HttpError(400, "invalid_project_id", badId);
    // Outside a token's scope, before the project's existence is told.
    const access = accessOf(route, method);
    if (!mayAccess(principal, route.projectId, access)) throw forbidden(principal, route.projectId, access);
    // Every project route, blobs included: a mistyped id is said at once, whatever the request.
    if (!(await this.options.store.hasProject(route.projectId))) throw new ProjectNotFoundError(route.projectId);
  }

  private dispatch(req: IncomingMessage, res: ServerResponse, route: ProjectRoute, head: boolean): Promise<void> {
    const { options } = this;
    switch (route.kind) {
      case "files":
        return getFiles(req, res, options, route.projectId);
      case "blob":
        if (!isSha256(route.sha256)) {
          throw new HttpError(400, "invalid_request", "blob address must be 64 lowercase hex characters");
        }
        return req.method === "PUT" ? putBlob(req, res, options, route.sha256) : getBlob(res, options, route.sha256, head);
      case "blobs":
        return postBlobs(req, res, options);
      case "blobsGet":
        return getBlobs(req, res, options);
      case "commits":
        return req.method === "POST" ? commit(req, res, options, route.projectId) : getCommits(req, res, options, route.projectId);
      case "sessions":
        return listSessions(res, options, route.projectId);
      case "events": {
        const badSession = validateSessionId(route.sessionId);
        if (badSession) throw new HttpError(400, "invalid_request", badSession);
        return req.method === "PUT"
          ? putEvents(req, res, options, route.projectId, route.sessionId)
          : getEvents(res, options, route.projectId, route.sessionId, head);
      }
    }
  }

  private projects(req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> {
    const { options } = this;
    if (req.method !== "POST") return listProjects(res, options, (id) => mayAccess(principal, id, "read"));
    if (!isAdmin(principal)) throw new HttpError(403, "forbidden", "only the admin token may create projects");
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

/** Reads are GET and HEAD, and POST /blobs/get (a read with a body). */
function accessOf(route: ProjectRoute, method: string): "read" | "write" {
  return method === "GET" || method === "HEAD" || route.kind === "blobsGet" ? "read" : "write";
}

function forbidden(principal: Principal, projectId: string, access: "read" | "write"): HttpError {
  const id = JSON.stringify(projectId);
  const readOnly = access === "write" && mayAccess(principal, projectId, "read");
  return new HttpError(403, "forbidden", readOnly ? `this token may only read project ${id}: writing needs a write token` : `this token has no access to project ${id}`);
}
