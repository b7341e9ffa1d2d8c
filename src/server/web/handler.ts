// The web view's entry (docs/web-view.md#pages): every URL outside /api/ and the probes comes here. Signs
// people in and out, asks the Authority who each request is (a revoked token is signed out at
// once), checks project access, and hands the request to its page.

import type { IncomingMessage, ServerResponse } from "node:http";
import { Door, type ProjectAccess } from "../access.js";
import { isAdmin, type Authority } from "../authority.js";
import { HttpError } from "../http.js";
import { ProjectNotFoundError, type ProjectStore } from "../store.js";
import { sendAsset } from "./assets.js";
import type { Visit, WebContext } from "./context.js";
import { readForm } from "./forms.js";
import { html } from "./html.js";
import { page, redirect, sendPage } from "./layout.js";
import { ProjectIndexes } from "./project-index.js";
import { parseWebRoute, WEB_ROUTES, type ProjectWebRoute, type WebRoute } from "./web-routes.js";
import { sessionCookie, WebSessions } from "./web-sessions.js";
import { devicePage, approveDevice } from "./pages/device.js";
import { filePage } from "./pages/file.js";
import { commitPage, commitsPage } from "./pages/commits.js";
import { liveAnswer } from "./pages/live.js";
import { isOpen, localPath, loginPage, signIn } from "./pages/login.js";
import { createProjectFromForm, projectsPage } from "./pages/projects.js";
import { sessionPage, sessionsPage } from "./pages/sessions.js";
import { treePage } from "./pages/tree.js";

export interface WebOptions extends Omit<WebContext, "indexes" | "store"> {
  store: ProjectStore;
  authority: Authority;
  onError?: (error: unknown) => void;
  /** The clock sessions idle out by (ServerOptions.now). */
  now?: () => number;
}

export type WebHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export function createWebHandler(options: WebOptions): WebHandler {
  const web = new WebView(options);
  return (req, res) => web.answer(req, res);
}

/** The web view's state (its sign-in sessions, the project indexes) and one method per step of a request. */
class WebView {
  private readonly ctx: WebContext;
  private readonly sessions: WebSessions;
  private readonly door: Door;

  constructor(private readonly options: WebOptions) {
    this.sessions = new WebSessions(options.now);
    this.ctx = { ...options, indexes: new ProjectIndexes(options.maxFeedBytes) };
    this.door = new Door(options.store, options.authority);
  }

  async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.handle(req, res);
    } catch (error) {
      const answer = webErrorOf(error);
      if (answer.status === 500) this.options.onError?.(error);
      if (res.headersSent) res.destroy();
      else sendErrorPage(res, answer);
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://web.invalid");
    const route = parseWebRoute(url.pathname);
    const method = req.method ?? "GET";
    const { methods } = WEB_ROUTES[route.kind];
    if (!Object.hasOwn(methods, method)) throw new HttpError(405, "method_not_allowed", `${method} is not allowed here`);
    if (route.kind === "asset") {
      if (!sendAsset(res, route.path)) throw new HttpError(404, "not_found", "no such asset");
      return;
    }
    // Not a page, signed in or not (a client with a wrong --api-url path must hear 404, not "sign in").
    if (route.kind === "notFound") throw new HttpError(404, "not_found", "no such page");
    const { sessions } = this;
    const session = sessions.find(req.headers.cookie);
    const { authority } = this.options;
    if (route.kind === "login") {
      if (method === "POST") return signIn(req, res, sessions, session, authority);
      return loginPage(res, sessions, session, {
        open: await isOpen(authority),
        next: localPath(url.searchParams.get("next") ?? undefined),
      });
    }
    const principal = session?.token === undefined ? undefined : await authority.identify(session.token);
    if (!session || !principal) return this.signedOut(req, res, url, route, session);
    const visit: Visit = { req, res, url, session, principal };
    if (method === "POST") await this.readAndCheckForm(visit, route);
    else await this.show(visit, route);
  }

  /**
   * Not signed in, or the session's token was revoked or expired: that session is forgotten at once
   * and the person sent to sign in. A session not signed in yet (the login form's) is kept: the
   * browser's other requests meanwhile (a favicon) must not void the form it shows.
   */
  private signedOut(req: IncomingMessage, res: ServerResponse, url: URL, route: WebRoute, session: ReturnType<WebSessions["find"]>): void {
    const revoked = session?.token !== undefined;
    if (revoked) this.sessions.close(session!);
    const clear: Record<string, string> = revoked ? { "set-cookie": sessionCookie(undefined) } : {};
    if (route.kind === "live" || req.method === "POST") throw new HttpError(401, "unauthorized", "signed out: sign in again", {}, clear);
    // Back to this page once signed in (the device link that uspark login prints, a shared link).
    const here = url.pathname + url.search;
    redirect(res, here === "/" ? "/login" : `/login?next=${encodeURIComponent(here)}`, clear);
  }

  private async readAndCheckForm(visit: Visit, route: WebRoute): Promise<void> {
    const form = await readForm(visit.req, visit.session);
    if (route.kind === "logout") {
      this.sessions.close(visit.session);
      return redirect(visit.res, "/login", { "set-cookie": sessionCookie(undefined) });
    }
    if (route.kind === "device") return approveDevice(visit, this.ctx, form);
    if (route.kind === "projects") {
      if (!isAdmin(visit.principal)) throw new HttpError(403, "forbidden", "only the admin token may create projects");
      return createProjectFromForm(visit, this.ctx, form);
    }
    throw new HttpError(404, "not_found", "no such page");
  }

  private async show(visit: Visit, route: WebRoute): Promise<void> {
    if (route.kind === "projects") return projectsPage(visit, this.ctx);
    if (route.kind === "device") return devicePage(visit, this.ctx);
    if (!("projectId" in route)) throw new HttpError(404, "not_found", "no such page");
    // The API's door: 403 outside the token's projects before the project's existence is told.
    const project = await this.door.open(visit.session.token, visit.principal, route.projectId, "read");
    return this.showProject(visit, route, project);
  }

  private showProject(visit: Visit, route: ProjectWebRoute, project: ProjectAccess): Promise<void> {
    const { ctx } = this;
    switch (route.kind) {
      case "tree":
        return treePage(visit, ctx, project);
      case "file":
        return filePage(visit, ctx, project, route.path);
      case "commits":
        return commitsPage(visit, ctx, project);
      case "commit":
        return commitPage(visit, ctx, project, route.version);
      case "sessions":
        return sessionsPage(visit, ctx, project);
      case "session":
        return sessionPage(visit, ctx, project, route.sessionId);
      case "live":
        return liveAnswer(visit, ctx, project);
    }
  }
}

function webErrorOf(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ProjectNotFoundError) return new HttpError(404, "project_not_found", error.message);
  return new HttpError(500, "internal", "internal server error");
}

function sendErrorPage(res: ServerResponse, error: HttpError): void {
  const title = error.status === 404 ? "Not found" : error.status === 403 ? "Not allowed" : `Error ${error.status}`;
  const body = html`<p class="error">${error.message}</p><p><a href="/">Projects</a></p>`;
  sendPage(res, error.status, page({ title, body }), error.headers);
}
