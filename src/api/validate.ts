// Pure validation of the project API's inputs (docs/api.md). Type imports only: the sync client
// reuses these functions.

import type { Change, CommitRequest, Expect } from "./types.js";

export const MAX_PATH_BYTES = 1024;
/** The v1.1 batch routes' limits on one request (docs/api.md): parts, and bytes of all parts. */
export const MAX_BATCH_PARTS = 1000;
export const MAX_BATCH_BYTES = 64 * 1024 * 1024;

const SESSION_ID = /^[A-Za-z0-9._-]{1,128}$/;
export const MAX_PROJECT_ID_BYTES = 255;
/** C0, DEL and C1: Unicode's control characters (category Cc). */
const CONTROL = /\p{Cc}/u;
const SHA256 = /^[0-9a-f]{64}$/;
const LONE_SURROGATE = /\p{Surrogate}/u;
const DOT = 0x2e;

/** Why `path` is not a valid project path, or undefined when it is valid. */
export function validateProjectPath(path: string): string | undefined {
  if (typeof path !== "string") return "path must be a string";
  if (path === "") return "path is empty";
  if (path.includes("\0")) return "path contains a NUL byte";
  if (LONE_SURROGATE.test(path)) return "path is not valid UTF-8";
  // A UTF-16 code unit is one to three UTF-8 bytes: counting is only needed in between.
  if (path.length > MAX_PATH_BYTES || (path.length * 3 > MAX_PATH_BYTES && utf8Length(path) > MAX_PATH_BYTES)) {
    return `path is longer than ${MAX_PATH_BYTES} bytes`;
  }
  if (path.includes("\\")) return "path contains a backslash";
  if (path.startsWith("/")) return "path must be relative";
  // Segment by segment without splitting: a scan asks this of every file in the tree.
  for (let from = 0; from <= path.length;) {
    const slash = path.indexOf("/", from);
    const end = slash === -1 ? path.length : slash;
    if (end === from) return "path has an empty segment";
    if (path.charCodeAt(from) === DOT && end - from <= 2) {
      if (end - from === 1) return "path has a '.' segment";
      if (path.charCodeAt(from + 1) === DOT) return "path has a '..' segment";
    }
    from = end + 1;
  }
  return undefined;
}

/**
 * Why `id` is not a valid project id, or undefined when it is valid (docs/api.md): 1-255 UTF-8
 * bytes, no `/`, `\`, control character, not `.` or `..`.
 */
export function validateProjectId(id: string): string | undefined {
  if (typeof id !== "string" || id === "") return "project id is empty";
  if (LONE_SURROGATE.test(id)) return "project id is not valid UTF-8";
  if (id.length > MAX_PROJECT_ID_BYTES || utf8Length(id) > MAX_PROJECT_ID_BYTES) {
    return `project id is longer than ${MAX_PROJECT_ID_BYTES} bytes`;
  }
  if (id.includes("/") || id.includes("\\")) return "project id must not contain / or \\";
  if (CONTROL.test(id)) return "project id must not contain control characters";
  if (id === "." || id === "..") return "project id must not be '.' or '..'";
  return undefined;
}

/** Why `id` is not a valid session id, or undefined when it is valid (it names a file: kept narrow). */
export function validateSessionId(id: string): string | undefined {
  if (!SESSION_ID.test(id)) return "session id must be 1-128 characters of A-Z a-z 0-9 . _ -";
  if (id === "." || id === "..") return "session id must not be '.' or '..'";
  return undefined;
}

export function isSha256(value: unknown): value is string {
  return typeof value === "string" && SHA256.test(value);
}

export type CommitParse =
  | { ok: true; value: CommitRequest }
  | { ok: false; error: "invalid_request"; message: string }
  | { ok: false; error: "invalid_path"; message: string; path: string };

/** Checks the shape of a parsed POST /commits body. Unknown fields are ignored. */
export function parseCommitRequest(body: unknown): CommitParse {
  const invalid = (message: string): CommitParse => ({ ok: false, error: "invalid_request", message });
  if (!isObject(body)) return invalid("body must be a JSON object");
  if (!Array.isArray(body.changes)) return invalid("changes must be an array");

  const changes: Change[] = [];
  for (const [i, item] of body.changes.entries()) {
    const at = `changes[${i}]`;
    if (!isObject(item)) return invalid(`${at} must be an object`);
    if (item.op !== "put" && item.op !== "delete") return invalid(`${at}.op must be "put" or "delete"`);
    if (typeof item.path !== "string") return invalid(`${at}.path must be a string`);
    const reason = validateProjectPath(item.path);
    if (reason) return { ok: false, error: "invalid_path", message: `${at}: ${reason}`, path: item.path };
    if (Object.hasOwn(item, "expect") && item.expect !== null && !isSha256(item.expect)) {
      return invalid(`${at}.expect must be 64 lowercase hex characters or null`);
    }
    const expect = Object.hasOwn(item, "expect") ? { expect: item.expect as Expect } : {};
    if (item.op === "delete") {
      changes.push({ op: "delete", path: item.path, ...expect });
      continue;
    }
    if (!isSha256(item.sha256)) return invalid(`${at}.sha256 must be 64 lowercase hex characters`);
    if (!Number.isSafeInteger(item.size) || (item.size as number) < 0) {
      return invalid(`${at}.size must be a non-negative integer`);
    }
    changes.push({ op: "put", path: item.path, sha256: item.sha256, size: item.size as number, ...expect });
  }

  const request: CommitRequest = { changes };
  if (body.source !== undefined) {
    const source = body.source;
    if (!isObject(source)) return invalid("source must be an object");
    for (const key of ["agent", "sessionId", "host"] as const) {
      if (source[key] !== undefined && typeof source[key] !== "string") {
        return invalid(`source.${key} must be a string`);
      }
    }
    request.source = {};
    if (typeof source.agent === "string") request.source.agent = source.agent;
    if (typeof source.sessionId === "string") request.source.sessionId = source.sessionId;
    if (typeof source.host === "string") request.source.host = source.host;
  }
  return { ok: true, value: request };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** The strict ancestors of a project path, shortest first: `a/b/c` → `a`, `a/b`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) out.push(path.slice(0, slash));
  return out;
}
