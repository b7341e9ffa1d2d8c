// Pure routing of the project API (docs/api.md): URL → route, and the methods each allows.

import { COMMITS_DEFAULT_LIMIT, COMMITS_MAX_LIMIT, COMMITS_MAX_WAIT_MS } from "../api/types.js";
import { HttpError } from "./http.js";
import { validateProjectPath } from "../api/validate.js";

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

export const ALLOWED: Record<Route["kind"], string[]> = {
  healthz: ["GET", "HEAD"],
  readyz: ["GET", "HEAD"],
  projects: ["GET", "HEAD", "POST"],
  deviceCode: ["POST"],
  deviceToken: ["POST"],
  files: ["GET", "HEAD"],
  blob: ["GET", "HEAD", "PUT"],
  blobs: ["POST"],
  blobsGet: ["POST"],
  commits: ["GET", "POST"],
  sessions: ["GET", "HEAD"],
  events: ["GET", "HEAD", "PUT"],
};

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

/** Routes answered without a bearer token: probes, and the device flow (the device has none yet). */
export function isPublicRoute(url: string): boolean {
  return /^\/(healthz|readyz|api\/device\/(code|token))(\?|$)/.test(url);
}

/** The `offset` query parameter, or undefined when absent or not a non-negative integer. */
export function queryOffset(url: string): number | undefined {
  const raw = queryOf(url).get("offset");
  return raw !== null && NUMBER.test(raw) ? Number(raw) : undefined;
}

/** `GET /files?version=N`: N, or undefined without one; 400 for one that is not a non-negative integer. */
export function queryVersion(url: string): number | undefined {
  const raw = queryOf(url).get("version");
  if (raw === null) return undefined;
  if (!NUMBER.test(raw)) throw invalidQuery("version must be a non-negative integer");
  return Number(raw);
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
  if (path !== null) {
    const reason = validateProjectPath(path);
    if (reason) throw new HttpError(400, "invalid_path", `path: ${reason}`, { path });
    parsed.path = path;
  }
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
