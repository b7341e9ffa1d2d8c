// `HEAD/GET/PUT /blobs/{sha256}` of docs/api.md, one blob at a time (the batch routes are in
// blobs-batch.ts).

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { ProjectAccess } from "../access.js";
import type { RouteContext } from "../context.js";
import { HttpError, readBody, sendJson } from "../http.js";
import type { BodyFeed } from "../store.js";

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

export async function putBlob(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: RouteContext,
  project: ProjectAccess,
  sha256: string,
): Promise<void> {
  let size = 0;
  const body: BodyFeed = (write) =>
    readBody(req, ctx.limits.maxBlobBytes, (chunk) => {
      size += chunk.length;
      return write(chunk);
    });
  const result = await project.putBlob(sha256, hashChecked(sha256, body));
  sendJson(res, result === "created" ? 201 : 200, { sha256, size });
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
