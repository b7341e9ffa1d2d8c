// Pure routing of the project API (docs/api.md): URL → route, and the route table: the methods
// each route answers and what each needs. The door (app.ts, access.ts) asks this table and
// nothing else, and the authorization matrix test is generated from it.

import { COMMITS_DEFAULT_LIMIT, COMMITS_MAX_LIMIT, COMMITS_MAX_WAIT_MS } from "../../api/types.js";
import { HttpError } from "../http.js";
import { checkIdentifier } from "../identifiers.js";

const NUMBER = /^\d{1,15}$/;

export type Route =
  | { kind: "healthz" }
  | { kind: "readyz" }
  | { kind: "projects" }
  | { kind: "deviceCode" }
  | { kind: "deviceToken" }
  | { kind: "files"; projectId: string }
  | { kind: "commits"; projectId: string }
  | { kind: "blob"; projectId: string; sha256: string }
  | { kind: "blobs"; projectId: string }
  | { kind: "blobsGet"; projectId: string }
  | { kind: "sessions"; projectId: string }
  | { kind: "events"; projectId: string; sessionId: string };

/**
 * What a request needs: nothing (probes, the device flow: the device has no token yet), any
 * accepted token, the admin token, or read or write access to the project the URL names.
 */
export type Need = "public" | "token" | "admin" | "read" | "write";

export interface RouteSpec {
  /** The URL, `{project}`, `{sha256}` and `{session}` standing for its parameters. */
  path: string;
  /** The methods it answers (others: 405), each with what it needs. */
  methods: Readonly<Record<string, Need>>;
}

/** The API's route table (docs/api.md). */
export const API_ROUTES: Readonly<Record<Route["kind"], RouteSpec>> = {
  healthz: { path: "/healthz", methods: { GET: "public", HEAD: "public" } },
  readyz: { path: "/readyz", methods: { GET: "public", HEAD: "public" } },
  projects: { path: "/api/projects", methods: { GET: "token", HEAD: "token", POST: "admin" } },
  deviceCode: { path: "/api/device/code", methods: { POST: "public" } },
  deviceToken: { path: "/api/device/token", methods: { POST: "public" } },
  files: { path: "/api/projects/{project}/files", methods: { GET: "read", HEAD: "read" } },
  blob: { path: "/api/projects/{project}/blobs/{sha256}", methods: { GET: "read", HEAD: "read", PUT: "write" } },
  blobs: { path: "/api/projects/{project}/blobs", methods: { POST: "write" } },
  // A read with a body.
  blobsGet: { path: "/api/projects/{project}/blobs/get", methods: { POST: "read" } },
  commits: { path: "/api/projects/{project}/commits", methods: { GET: "read", POST: "write" } },
  sessions: { path: "/api/projects/{project}/sessions", methods: { GET: "read", HEAD: "read" } },
  events: { path: "/api/projects/{project}/sessions/{session}/events", methods: { GET: "read", HEAD: "read", PUT: "write" } },
};

/** What `method` on `route` needs; 405 when the route does not answer it. */
export function needOf(kind: Route["kind"], method: string): Need {
  const { methods } = API_ROUTES[kind];
  const need = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (need === undefined)
    throw new HttpError(405, "method_not_allowed", `${method} is not allowed here`, {}, { allow: Object.keys(methods).join(", ") });
  return need;
}

export function parseRoute(url: string): Route {
  const notFound = new HttpError(404, "not_found", "no such route");
  const parts = url.split("?")[0]!.split("/");
  if (parts.length === 2 && parts[1] === "healthz") return { kind: "healthz" };
  if (parts.length === 2 && parts[1] === "readyz") return { kind: "readyz" };
  if (parts.length === 3 && parts[0] === "" && parts[1] === "api" && parts[2] === "projects") return { kind: "projects" };
  if (parts.length === 4 && parts[0] === "" && parts[1] === "api" && parts[2] === "device") {
    if (parts[3] === "code") return { kind: "deviceCode" };
    if (parts[3] === "token") return { kind: "deviceToken" };
  }
  // "", "api", "projects", id, ...rest
  if (parts.length < 5 || parts[0] !== "" || parts[1] !== "api" || parts[2] !== "projects") throw notFound;
  const projectId = decodeSegment(parts[3]!);
  const rest = parts.slice(4).join("/");
  const segment = (i: number) => decodeSegment(parts[4 + i]!);
  if (rest === "files") return { kind: "files", projectId };
  if (rest === "commits") return { kind: "commits", projectId };
  if (rest === "blobs") return { kind: "blobs", projectId };
  if (rest === "blobs/get") return { kind: "blobsGet", projectId };
  if (rest === "sessions") return { kind: "sessions", projectId };
  if (/^blobs\/[^/]+$/.test(rest)) return { kind: "blob", projectId, sha256: segment(1) };
  if (/^sessions\/[^/]+\/events$/.test(rest)) return { kind: "events", projectId, sessionId: segment(1) };
  throw notFound;
}

/** Routes whose every method is answered without a bearer token (see API_ROUTES). */
export function isPublicRoute(url: string): boolean {
  let route: Route;
  try {
    route = parseRoute(url);
  } catch {
    return false;
  }
  return Object.values(API_ROUTES[route.kind].methods).every((need) => need === "public");
}

/** The `offset` query parameter, or undefined when absent or not a non-negative integer. */
export function queryOffset(url: string): number | undefined {
  const raw = queryOf(url).get("offset");
  return raw !== null && NUMBER.test(raw) ? Number(raw) : undefined;
}

/** `GET /files?version=N`: N, or undefined without one; 400 for one that is not a non-negative integer. */
export function queryVersion(url: string): number | undefined {
  const raw = queryOf(url).get("version");
  return raw === null ? undefined : Number(checkIdentifier("version", raw));
}

export interface CommitsQuery {
  since: number;
  limit: number;
  path?: string;
  /** Milliseconds to wait for a commit past `since` (0: answer at once). */
  wait: number;
}

/** `GET /commits?since=N&limit=M[&path=P][&wait=ms]` with the defaults and limits of docs/api.md (v1.2). */
export function queryCommits(url: string): CommitsQuery {
  const query = queryOf(url);
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = query.get(name);
    if (raw === null) return fallback;
    if (!NUMBER.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw invalidQuery(`${name} must be an integer from ${min} to ${max}`);
    }
    return Number(raw);
  };
  const parsed: CommitsQuery = {
    since: number("since", 0, 0, Number.MAX_SAFE_INTEGER),
    limit: number("limit", COMMITS_DEFAULT_LIMIT, 1, COMMITS_MAX_LIMIT),
    wait: number("wait", 0, 0, COMMITS_MAX_WAIT_MS),
  };
  const path = query.get("path");
  if (path !== null) parsed.path = checkIdentifier("path", path);
  return parsed;
}

function queryOf(url: string): URLSearchParams {
  return new URLSearchParams(url.split("?").slice(1).join("?"));
}

function invalidQuery(message: string): HttpError {
  return new HttpError(400, "invalid_request", message);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "invalid_request", "malformed percent-encoding in the URL");
  }
}
