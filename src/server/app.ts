// HTTP handling of the project API (design.md §3): routing, auth, validation, answers.

import { createHash, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { HttpError, readBody, readJson, sendError, sendJson } from "./http.js";
import { HashMismatchError, type Store } from "./store.js";
import { isSha256, parseCommitRequest, validateProjectId } from "./validate.js";

export interface CommitEvent {
  projectId: string;
  version: number;
  changes: number;
}

export interface AppOptions {
  store: Store;
  token?: string;
  maxBlobBytes: number;
  maxJsonBytes: number;
  onCommit?: (event: CommitEvent) => void;
  onError?: (error: unknown) => void;
}

type Route =
  | { kind: "files"; projectId: string }
  | { kind: "commits"; projectId: string }
  | { kind: "blob"; projectId: string; sha256: string };

const ALLOWED: Record<Route["kind"], string[]> = {
  files: ["GET", "HEAD"],
  blob: ["GET", "HEAD", "PUT"],
  commits: ["POST"],
};

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export function createHandler(options: AppOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { store } = options;
  const expectedToken = options.token === undefined ? undefined : digest(options.token);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (expectedToken && !isAuthorized(req.headers.authorization, expectedToken)) {
      throw new HttpError(401, "unauthorized", "missing or wrong bearer token", {}, {
        "www-authenticate": 'Bearer realm="uspark"',
      });
    }
    const route = parseRoute(req.url ?? "/");
    const method = req.method ?? "GET";
    const allowed = ALLOWED[route.kind];
    if (!allowed.includes(method)) {
      throw new HttpError(405, "method_not_allowed", `${method} is not allowed here`, {}, {
        allow: allowed.join(", "),
      });
    }
    const badId = validateProjectId(route.projectId);
    if (badId) throw new HttpError(400, "invalid_project_id", badId);

    switch (route.kind) {
      case "files":
        return sendJson(res, 200, store.files(route.projectId));
      case "blob":
        if (!isSha256(route.sha256)) {
          throw new HttpError(400, "invalid_request", "blob address must be 64 lowercase hex characters");
        }
        return method === "PUT" ? putBlob(req, res, route.sha256) : getBlob(res, route.sha256, method === "HEAD");
      case "commits":
        return commit(req, res, route.projectId);
    }
  }

  async function getBlob(res: ServerResponse, sha256: string, headOnly: boolean): Promise<void> {
    const size = await store.blobSize(sha256);
    if (size === undefined) throw new HttpError(404, "blob_not_found", `no blob ${sha256}`);
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": String(size),
      etag: `"${sha256}"`,
      "cache-control": "public, max-age=31536000, immutable",
    });
    if (headOnly) {
      res.end();
      return;
    }
    // A client that goes away mid-download is not a server error.
    await pipeline(createReadStream(store.blobPath(sha256)), res).catch(() => res.destroy());
  }

  async function putBlob(req: IncomingMessage, res: ServerResponse, sha256: string): Promise<void> {
    let size = 0;
    let result: "created" | "exists";
    try {
      result = await store.putBlob(sha256, (write) =>
        readBody(req, options.maxBlobBytes, (chunk) => {
          size += chunk.length;
          return write(chunk);
        }),
      );
    } catch (error) {
      if (error instanceof HashMismatchError) throw new HttpError(400, "hash_mismatch", error.message);
      throw error;
    }
    sendJson(res, result === "created" ? 201 : 200, { sha256, size });
  }

  async function commit(req: IncomingMessage, res: ServerResponse, projectId: string): Promise<void> {
    const key = req.headers["idempotency-key"];
    if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) {
      const message = "an Idempotency-Key header of 1-255 visible ASCII characters is required";
      throw new HttpError(400, "invalid_request", message);
    }
    const parsed = parseCommitRequest(await readJson(req, options.maxJsonBytes));
    if (!parsed.ok) {
      const extra = parsed.error === "invalid_path" ? { path: parsed.path } : {};
      throw new HttpError(400, parsed.error, parsed.message, extra);
    }
    const { changes, source } = parsed.value;
    const outcome = await store.commit(projectId, key, changes, source);
    switch (outcome.kind) {
      case "committed":
        options.onCommit?.({ projectId, version: outcome.version, changes: changes.length });
        return sendJson(res, 200, { version: outcome.version });
      case "replayed":
        return sendJson(res, 200, { version: outcome.version }, { "idempotent-replayed": "true" });
      case "missing_blobs":
        throw new HttpError(422, "missing_blobs", `${outcome.missing.length} blob(s) must be uploaded first`, {
          missing: outcome.missing,
        });
      case "size_mismatch": {
        const message = `${outcome.path}: size ${outcome.size} differs from the blob's ${outcome.actual} bytes`;
        throw new HttpError(400, "invalid_request", message, { path: outcome.path });
      }
    }
  }

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!(error instanceof HttpError)) {
        options.onError?.(error);
        error = new HttpError(500, "internal", "internal server error");
      }
      if (res.headersSent) res.destroy();
      else sendError(res, error as HttpError);
    });
  };
}

function parseRoute(url: string): Route {
  const notFound = new HttpError(404, "not_found", "no such route");
  const parts = url.split("?")[0]!.split("/");
  // "", "api", "projects", id, ...rest
  if (parts.length < 5 || parts[0] !== "" || parts[1] !== "api" || parts[2] !== "projects") throw notFound;
  const projectId = decodeSegment(parts[3]!);
  const rest = parts.slice(4);
  if (rest.length === 1 && rest[0] === "files") return { kind: "files", projectId };
  if (rest.length === 1 && rest[0] === "commits") return { kind: "commits", projectId };
  if (rest.length === 2 && rest[0] === "blobs") return { kind: "blob", projectId, sha256: decodeSegment(rest[1]!) };
  throw notFound;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "invalid_request", "malformed percent-encoding in the URL");
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Constant-time check of `Authorization: Bearer <token>` (hashing first evens out lengths). */
function isAuthorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(.+?) *$/i.exec(header ?? "");
  return timingSafeEqual(digest(match?.[1] ?? ""), expected) && match !== null;
}
