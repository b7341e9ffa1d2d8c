// The v1 routes of docs/api.md (with their v1.2 additions): GET /files, HEAD/GET/PUT
// /blobs/{sha256}, POST /commits.

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { API_ERRORS, API_VERSION, type CommitAnswer, type ConflictEntry, type Listing } from "../api/types.js";
import type { ProjectAccess } from "./access.js";
import type { RouteContext } from "./context.js";
import { HttpError, readBody, readJson, sendJson } from "./http.js";
import { queryVersion } from "./routes/table.js";
import type { BodyFeed } from "./store.js";
import { parseCommitRequest } from "../api/validate.js";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** `GET /files[?version=N]`: the listing now or as of version N, saying the API version it speaks. */
export async function getFiles(req: IncomingMessage, res: ServerResponse, project: ProjectAccess): Promise<void> {
  const version = queryVersion(req.url ?? "");
  const listing = await project.files(version);
  if (!listing) {
    throw new HttpError(404, API_ERRORS.versionNotFound, `version ${version} is past the project's head`);
  }
  const answer: Listing = { ...listing, api: API_VERSION };
  sendJson(res, 200, answer);
}

export async function getBlob(res: ServerResponse, project: ProjectAccess, sha256: string, headOnly: boolean): Promise<void> {
  const blob = headOnly ? undefined : await project.readBlob(sha256);
  const size = headOnly ? (await project.blobSizes([sha256])).get(sha256) : blob?.size;
  if (size === undefined) throw new HttpError(404, "blob_not_found", `no blob ${sha256}`);
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-length": String(size),
    etag: `"${sha256}"`,
    "cache-control": "public, max-age=31536000, immutable",
  });
  if (!blob) {
    res.end();
    return;
  }
  // A client that goes away mid-download is not a server error.
  await pipeline(blob.chunks(), res).catch(() => res.destroy());
}

export async function putBlob(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess, sha256: string): Promise<void> {
  let size = 0;
  const body: BodyFeed = (write) =>
    readBody(req, ctx.limits.maxBlobBytes, (chunk) => {
      size += chunk.length;
      return write(chunk);
    });
  const result = await project.putBlob(sha256, hashChecked(sha256, body));
  sendJson(res, result === "created" ? 201 : 200, { sha256, size });
}

export async function commit(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const key = req.headers["idempotency-key"];
  if (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key)) {
    const message = "an Idempotency-Key header of 1-255 visible ASCII characters is required";
    throw new HttpError(400, "invalid_request", message);
  }
  const parsed = parseCommitRequest(await readJson(req, ctx.limits.maxJsonBytes));
  if (!parsed.ok) {
    const extra = parsed.error === "invalid_path" ? { path: parsed.path } : {};
    throw new HttpError(400, parsed.error, parsed.message, extra);
  }
  const outcome = await project.commit(key, parsed.value);
  switch (outcome.kind) {
    case "committed":
      ctx.onCommit?.({ projectId, version: outcome.version, changes: parsed.value.changes.length });
      return sendJson(res, 200, commitAnswer(outcome));
    case "replayed":
      return sendJson(res, 200, commitAnswer(outcome), { "idempotent-replayed": "true" });
    case "key_reused": {
      const message = "this Idempotency-Key was used by an applied commit with another body: use a new key for a new commit";
      throw new HttpError(422, API_ERRORS.idempotencyKeyReused, message);
    }
    case "conflict": {
      const message = conflictMessage(outcome.conflicts);
      throw new HttpError(409, API_ERRORS.conflict, message, { conflicts: outcome.conflicts, version: outcome.version });
    }
    case "missing_blobs":
      throw new HttpError(422, API_ERRORS.missingBlobs, `${outcome.missing.length} blob(s) must be uploaded first`, {
        missing: outcome.missing,
      });
    case "size_mismatch": {
      const message = `${outcome.path}: size ${outcome.size} differs from the blob's ${outcome.actual} bytes`;
      throw new HttpError(400, API_ERRORS.invalidRequest, message, { path: outcome.path });
    }
  }
}

function commitAnswer(outcome: { version: number; chain: string }): CommitAnswer {
  return { version: outcome.version, chain: outcome.chain, api: API_VERSION };
}

/** What a 409 says: the paths whose expectation failed, and each file/directory clash by both its paths. */
function conflictMessage(conflicts: readonly ConflictEntry[]): string {
  const clashes = conflicts.filter((c) => c.clash !== undefined).map((c) => `${c.path} and ${c.clash}`);
  const expected = conflicts.length - clashes.length;
  const parts = expected > 0 ? [`${expected} path(s) do not hold what the commit expects`] : [];
  if (clashes.length > 0) parts.push(`a file and a directory under one name: ${clashes.join("; ")}`);
  return `${parts.join("; ")}: nothing was applied`;
}

/**
 * The feed, checked: its bytes must hash to `sha256`, else it fails with a 400 hash_mismatch
 * after the last chunk, and the store keeps nothing (as for any feed that fails).
 */
function hashChecked(sha256: string, feed: BodyFeed): BodyFeed {
  return async (write) => {
    const hash = createHash("sha256");
    await feed((chunk) => {
      hash.update(chunk);
      return write(chunk);
    });
    const actual = hash.digest("hex");
    if (actual !== sha256) throw new HttpError(400, "hash_mismatch", `body has SHA-256 ${actual}, not ${sha256}`, { sha256 });
  };
}
