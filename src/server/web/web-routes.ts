// The URLs of the web view (docs/web-view.md#pages), parsed: every name in a path is one percent-decoded
// segment, a file's path the segments after /f/. WEB_ROUTES is its route table, as API_ROUTES is
// the API's: the authorization matrix test is generated from both.

import type { RouteSpec } from "../routes/table.js";

export type WebRoute =
  | { kind: "asset"; path: string }
  | { kind: "login" }
  | { kind: "logout" }
  | { kind: "device" }
  | { kind: "projects" }
  | { kind: "tree"; projectId: string }
  | { kind: "file"; projectId: string; path: string }
  | { kind: "commits"; projectId: string }
  | { kind: "commit"; projectId: string; version: number }
  | { kind: "sessions"; projectId: string }
  | { kind: "session"; projectId: string; sessionId: string }
  | { kind: "live"; projectId: string }
  | { kind: "notFound" };

export type ProjectWebRoute = Extract<WebRoute, { projectId: string }>;

const FIXED: Record<string, WebRoute> = {
  "/": { kind: "projects" },
  "/login": { kind: "login" },
  "/logout": { kind: "logout" },
  "/device": { kind: "device" },
};

export function parseWebRoute(pathname: string): WebRoute {
  const fixed = FIXED[pathname];
  if (fixed) return fixed;
  if (pathname.startsWith("/assets/")) return { kind: "asset", path: pathname };
  const segments = decodeSegments(pathname);
  if (!segments || segments[0] !== "p" || segments.length < 2 || segments[1] === "") return { kind: "notFound" };
  return projectRoute(segments[1]!, segments.slice(2));
}

function projectRoute(projectId: string, rest: string[]): WebRoute {
  const [section, name, ...more] = rest;
  if (section === undefined) return { kind: "tree", projectId };
  if (section === "f" && name !== undefined) return { kind: "file", projectId, path: [name, ...more].join("/") };
  if (more.length > 0) return { kind: "notFound" };
  if (section === "commits" && name === undefined) return { kind: "commits", projectId };
  if (section === "commits" && /^[1-9]\d{0,14}$/.test(name!)) return { kind: "commit", projectId, version: Number(name) };
  if (section === "sessions" && name === undefined) return { kind: "sessions", projectId };
  if (section === "sessions" && name) return { kind: "session", projectId, sessionId: name };
  if (section === "live" && name === undefined) return { kind: "live", projectId };
  return { kind: "notFound" };
}

function decodeSegments(pathname: string): string[] | undefined {
  try {
    return pathname.slice(1).split("/").map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

/**
 * The web view's route table: the methods each route answers (others: 405) and what each needs
 * ("token": any signed-in session; a project's pages are opened through the API's door, access.ts).
 */
export const WEB_ROUTES: Readonly<Record<WebRoute["kind"], RouteSpec>> = {
  asset: { path: "/assets/{asset}", methods: { GET: "public", HEAD: "public" } },
  login: { path: "/login", methods: { GET: "public", HEAD: "public", POST: "public" } },
  logout: { path: "/logout", methods: { POST: "token" } },
  device: { path: "/device", methods: { GET: "token", HEAD: "token", POST: "token" } },
  projects: { path: "/", methods: { GET: "token", HEAD: "token", POST: "admin" } },
  tree: { path: "/p/{project}", methods: { GET: "read", HEAD: "read" } },
  file: { path: "/p/{project}/f/{path}", methods: { GET: "read", HEAD: "read" } },
  commits: { path: "/p/{project}/commits", methods: { GET: "read", HEAD: "read" } },
  commit: { path: "/p/{project}/commits/{version}", methods: { GET: "read", HEAD: "read" } },
  sessions: { path: "/p/{project}/sessions", methods: { GET: "read", HEAD: "read" } },
  session: { path: "/p/{project}/sessions/{session}", methods: { GET: "read", HEAD: "read" } },
  live: { path: "/p/{project}/live", methods: { GET: "read" } },
  // Answered 404 whoever asks (a client with a wrong --api-url path must hear 404, not "sign in").
  notFound: { path: "/{anything else}", methods: { GET: "public", HEAD: "public", POST: "public" } },
};
