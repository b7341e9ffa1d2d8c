// What every page of the web view is given.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { DeviceLogins, Principal } from "../authority.js";
import type { ProjectStore } from "../store.js";
import type { ProjectIndexes } from "./project-index.js";
import type { WebSession } from "./web-sessions.js";

export interface WebContext {
  /** The project list and creation only: a project's data is reached through its ProjectAccess (access.ts). */
  store: Pick<ProjectStore, "projects" | "createProject">;
  indexes: ProjectIndexes;
  /** The most bytes of commit records read at once (the API's JSON limit). */
  maxFeedBytes: number;
  /** Device logins waiting for approval; absent: /device says device login is not available. */
  devices?: DeviceLogins;
  /** Aborts when the server closes: live waits answer at once. */
  closing?: AbortSignal;
}

/** One signed-in request: who it is, now (asked again at every request). */
export interface Visit {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  session: WebSession;
  principal: Principal;
}
