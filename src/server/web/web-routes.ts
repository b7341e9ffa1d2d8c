// The URLs of the web view (docs/web-view.md#pages), parsed: every name in a path is one percent-decoded
// segment, a file's path the segments after /f/.

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

/** Which methods each route answers (others: 405). */
export const WEB_METHODS: Record<WebRoute["kind"], readonly string[]> = {
  asset: ["GET", "HEAD"],
  login: ["GET", "HEAD", "POST"],
  logout: ["POST"],
  device: ["GET", "HEAD", "POST"],
  projects: ["GET", "HEAD", "POST"],
  tree: ["GET", "HEAD"],
  file: ["GET", "HEAD"],
  commits: ["GET", "HEAD"],
  commit: ["GET", "HEAD"],
  sessions: ["GET", "HEAD"],
  session: ["GET", "HEAD"],
  live: ["GET"],
  notFound: ["GET", "HEAD", "POST"],
};
