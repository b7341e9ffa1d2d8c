// Pure routing of the project API (design.md §3): URL → route, and the methods each allows.

import { HttpError } from "./http.js";

export type Route =
  | { kind: "healthz" }
  | { kind: "readyz" }
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
  files: ["GET", "HEAD"],
  blob: ["GET", "HEAD", "PUT"],
  blobs: ["POST"],
  blobsGet: ["POST"],
  commits: ["POST"],
  sessions: ["GET", "HEAD"],
  events: ["GET", "HEAD", "PUT"],
};

export function parseRoute(url: string): Route {
  const notFound = new HttpError(404, "not_found", "no such route");
  const parts = url.split("?")[0]!.split("/");
  if (parts.length === 2 && parts[1] === "healthz") return { kind: "healthz" };
  if (parts.length === 2 && parts[1] === "readyz") return { kind: "readyz" };
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

/** The `offset` query parameter, or undefined when absent or not a non-negative integer. */
export function queryOffset(url: string): number | undefined {
  const raw = new URLSearchParams(url.split("?")[1] ?? "").get("offset");
  return raw !== null && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "invalid_request", "malformed percent-encoding in the URL");
  }
}
