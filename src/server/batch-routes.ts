// The v1.1 batch blob routes (docs/api.md): POST /blobs (multipart/form-data parsed by the
// platform, Request.formData()) and POST /blobs/get (a multipart answer streamed blob by blob).

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { Context, Limits } from "./context.js";
import { HttpError, readBody, readJson, sendJson } from "./http.js";
import { multipartBoundary, OccurrenceCounter } from "./multipart-guard.js";
import type { ProjectStore } from "./store.js";
import { isSha256 } from "../api/validate.js";
import { closingDelimiter, CRLF, multipartType, newBoundary, partHead } from "../api/multipart.js";
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
  const results = await mapLimit(verified, STORE_CONCURRENCY, ([sha256, blob]) =>
    ctx.store.putBlob(sha256, async (write) => {
      for await (const chunk of blob.stream()) await write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }),
  );
  const stored = verified.filter((_, i) => results[i] === "created").map(([sha256]) => sha256);
  const present = verified.filter((_, i) => results[i] === "exists").map(([sha256]) => sha256);
  sendJson(res, 200, { stored, present });
}

/** The body, parsed; refused as soon as it holds more parts than allowed, before the rest is read. */
async function parseMultipart(req: IncomingMessage, limits: Limits): Promise<FormData> {
  const type = req.headers["content-type"] ?? "";
  const boundary = multipartBoundary(type);
  if (boundary === undefined) throw invalidMultipart("Content-Type must be multipart/form-data with a boundary");
  const delimiters = new OccurrenceCounter(Buffer.from(`--${boundary}`));
  const chunks: Buffer[] = [];
  await readBody(req, limits.maxBatchBytes + limits.maxBatchParts * FRAMING_BYTES_PER_PART, (chunk) => {
    // A delimiter begins each part, and one more ends the body.
    if (delimiters.push(chunk) > limits.maxBatchParts + 1) throw tooManyParts(limits.maxBatchParts);
    chunks.push(chunk);
  });
  const body = Buffer.concat(chunks.splice(0));
  try {
    return await new Request("http://uspark.invalid/", { method: "POST", headers: { "content-type": type }, body }).formData();
  } catch {
    throw invalidMultipart("body is not valid multipart/form-data (cut short, or a wrong boundary?)");
  }
}

/** sha256 → bytes of every part, each checked; throws the answer for the first bad part. */
async function verifyParts(form: FormData, limits: Limits): Promise<Map<string, Blob>> {
  const verified = new Map<string, Blob>();
  let total = 0;
  for (const [name, value] of form) {
    if (!isSha256(name)) throw invalidMultipart("each part's name must be its SHA-256 in 64 lowercase hex characters");
    // A part without a filename comes as text; its UTF-8 bytes are what is checked.
    const blob = typeof value === "string" ? new Blob([value]) : value;
    if (blob.size > limits.maxBlobBytes) {
      throw new HttpError(413, "too_large", `part ${name} holds ${blob.size} bytes, over this server's limit of ${limits.maxBlobBytes} a blob`, { sha256: name });
    }
    total += blob.size;
    if (total > limits.maxBatchBytes) {
      throw new HttpError(413, "too_large", `parts hold more than ${limits.maxBatchBytes} bytes: send fewer`);
    }
    const actual = await sha256Of(blob);
    if (actual !== name) {
      throw new HttpError(400, "hash_mismatch", `part ${name} has SHA-256 ${actual}`, { sha256: name });
    }
    verified.set(name, blob);
  }
  return verified;
}

async function sha256Of(blob: Blob): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of blob.stream()) hash.update(chunk);
  return hash.digest("hex");
}

/** Answers the asked blobs as multipart/form-data, one part per blob named by its sha256, read as sent. */
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

  const boundary = newBoundary();
  const heads = hashes.map((sha256) => partHead(boundary, sha256));
  const tail = closingDelimiter(boundary);
  const length = heads.reduce((sum, head, i) => sum + head.length + sizes.get(hashes[i]!)! + CRLF.length, tail.length);
  res.writeHead(200, {
    "content-type": multipartType(boundary),
    "content-length": String(length),
    "cache-control": "no-store",
  });
  await pipeline(multipartBody(ctx.store, hashes, heads, tail), res).catch(() => res.destroy());
}

/** Writing multipart is no parsing: the client reads it back with the platform's Response.formData(). */
async function* multipartBody(store: ProjectStore, hashes: string[], heads: Buffer[], tail: Buffer): AsyncGenerator<Uint8Array> {
  for (const [i, sha256] of hashes.entries()) {
    const blob = await store.readBlob(sha256);
    if (!blob) throw new Error(`blob ${sha256} went away while it was being sent`);
    yield heads[i]!;
    yield* blob.chunks();
    yield CRLF;
  }
  yield tail;
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

function tooManyParts(limit: number): HttpError {
  // The rest of the body is not read, so the connection cannot be reused.
  return new HttpError(413, "too_large", `more than ${limit} parts: at most ${limit} a request`, {}, { connection: "close" });
}
