// The v1.1 batch blob routes (design.md §3): POST /blobs and POST /blobs/get, multipart/form-data
// built and parsed by the platform (FormData, Request.formData(), new Response(formData)).

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Context, Limits } from "./context.js";
import { HttpError, readAll, readJson, sendJson } from "./http.js";
import { isSha256 } from "./validate.js";
import { mapLimit } from "../map-limit.js";

/** Room for the multipart framing (boundaries, part headers) on top of the blob bytes. */
const FRAMING_BYTES_PER_PART = 1024;
const STORE_CONCURRENCY = 16;

/**
 * Stores every part of a multipart upload. Every part is parsed and its hash checked before any
 * is stored, so a request refused for one bad part stores nothing.
 */
export async function postBlobs(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const verified = [...(await verifyParts(await parseMultipart(req, ctx.limits), ctx.limits))];
  // A few at a time: each new blob waits for its own fsyncs. The parts' hashes are checked already.
  const results = await mapLimit(verified, STORE_CONCURRENCY, ([sha256, bytes]) => ctx.store.putBlob(sha256, async (write) => write(bytes)));
  const stored = verified.filter((_, i) => results[i] === "created").map(([sha256]) => sha256);
  const present = verified.filter((_, i) => results[i] === "exists").map(([sha256]) => sha256);
  sendJson(res, 200, { stored, present });
}

async function parseMultipart(req: IncomingMessage, limits: Limits): Promise<FormData> {
  const type = req.headers["content-type"] ?? "";
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) {
    throw invalidMultipart("Content-Type must be multipart/form-data with a boundary");
  }
  const body = await readAll(req, limits.maxBatchBytes + limits.maxBatchParts * FRAMING_BYTES_PER_PART);
  try {
    return await new Request("http://uspark.invalid/", { method: "POST", headers: { "content-type": type }, body }).formData();
  } catch {
    throw invalidMultipart("body is not valid multipart/form-data (cut short, or a wrong boundary?)");
  }
}

/** sha256 → bytes of every part, each checked; throws the answer for the first bad part. */
async function verifyParts(form: FormData, limits: Limits): Promise<Map<string, Buffer>> {
  const parts = [...form];
  if (parts.length > limits.maxBatchParts) {
    throw new HttpError(413, "too_large", `${parts.length} parts: at most ${limits.maxBatchParts} a request`);
  }
  const verified = new Map<string, Buffer>();
  let total = 0;
  for (const [name, value] of parts) {
    if (!isSha256(name)) throw invalidMultipart("each part's name must be its SHA-256 in 64 lowercase hex characters");
    // A part without a filename comes as text; its UTF-8 bytes are what is checked.
    const bytes = typeof value === "string" ? Buffer.from(value) : Buffer.from(await value.arrayBuffer());
    total += bytes.length;
    if (total > limits.maxBatchBytes) {
      throw new HttpError(413, "too_large", `parts hold more than ${limits.maxBatchBytes} bytes: send fewer`);
    }
    const actual = createHash("sha256").update(bytes).digest("hex");
    if (actual !== name) {
      throw new HttpError(400, "hash_mismatch", `part ${name} has SHA-256 ${actual}`, { sha256: name });
    }
    verified.set(name, bytes);
  }
  return verified;
}

/** Answers the asked blobs as multipart/form-data, one part per blob named by its sha256. */
export async function getBlobs(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const hashes = parseHashList(await readJson(req, ctx.limits.maxJsonBytes), ctx.limits);
  // Sizes first: a request that will be refused reads no blob.
  const sizes = await ctx.store.blobSizes(hashes);
  const missing = hashes.filter((sha256) => !sizes.has(sha256));
  if (missing.length > 0) throw new HttpError(404, "not_found", `${missing.length} blob(s) not found`, { missing });
  const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
  if (total > ctx.limits.maxBatchBytes) {
    throw new HttpError(413, "too_large", `the answer would hold ${total} bytes, over ${ctx.limits.maxBatchBytes}: ask for fewer`);
  }

  const form = new FormData();
  for (const sha256 of hashes) {
    const blob = await ctx.store.readBlob(sha256);
    if (!blob) throw new HttpError(404, "not_found", "1 blob(s) not found", { missing: [sha256] });
    form.append(sha256, blob, sha256);
  }
  const answer = new Response(form);
  res.writeHead(200, { "content-type": answer.headers.get("content-type")!, "cache-control": "no-store" });
  await pipeline(Readable.fromWeb(answer.body! as never), res).catch(() => res.destroy());
}

function parseHashList(body: unknown, limits: Limits): string[] {
  const list = (body as { sha256?: unknown } | null)?.sha256;
  if (!Array.isArray(list) || !list.every(isSha256)) {
    throw new HttpError(400, "invalid_request", 'body must be { "sha256": [<64 lowercase hex characters>, ...] }');
  }
  if (list.length > limits.maxBatchParts) {
    throw new HttpError(413, "too_large", `${list.length} hashes: at most ${limits.maxBatchParts} a request`);
  }
  return [...new Set(list)];
}

function invalidMultipart(message: string): HttpError {
  return new HttpError(400, "invalid_multipart", message);
}
