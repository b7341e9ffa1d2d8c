// The v1.1 batch blob routes (docs/api.md): POST /blobs (multipart/form-data read as it streams
// in) and POST /blobs/get (a multipart answer streamed blob by blob).

import { createHash, type Hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { ProjectAccess } from "../access.js";
import type { Limits, RouteContext } from "../context.js";
import { HttpError, readBody, readJson, sendJson } from "../http.js";
import { BlobSpool, type SpooledPart } from "../blob-spool.js";
import type { WireErrorCode, WireErrorStatus } from "../../api/errors.js";
import { isSha256 } from "../../api/validate.js";
import { closingDelimiter, CRLF, multipartType, newBoundary, partHead } from "../../api/multipart.js";
import { multipartBoundary, MultipartError, MultipartReader } from "../../api/multipart-reader.js";

/** Room for the multipart framing (boundaries, part headers) on top of the blob bytes. */
const FRAMING_BYTES_PER_PART = 1024;

/**
 * Stores every part of a multipart upload. The body is read as it streams in: each part is
 * spooled to disk and its hash checked as its bytes pass, and none is stored before all are
 * checked (a request refused for one bad part stores nothing). No part is ever whole in memory.
 */
export async function postBlobs(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const boundary = multipartBoundary(req.headers["content-type"] ?? "");
  if (boundary === undefined) throw new HttpError(400, "invalid_multipart", "Content-Type must be multipart/form-data with a boundary");
  const spool = await BlobSpool.open();
  try {
    const parts = await receiveParts(req, boundary, spool, ctx.limits);
    // Stored together: made durable once for the whole request (a pack file, one transaction).
    const results = await project.putBlobs(
      parts.map(([sha256, part]) => ({ sha256, size: part.size, feed: (write) => spool.feed(part, write) })),
    );
    const stored = parts.filter((_, i) => results[i] === "created").map(([sha256]) => sha256);
    const present = parts.filter((_, i) => results[i] === "exists").map(([sha256]) => sha256);
    sendJson(res, 200, { stored, present });
  } finally {
    await spool.close();
  }
}

/** The body read through a MultipartReader into `spool`; its parts, by hash, each checked. */
async function receiveParts(
  req: IncomingMessage,
  boundary: string,
  spool: BlobSpool,
  limits: Limits,
): Promise<Array<[string, SpooledPart]>> {
  const reader = new MultipartReader(boundary);
  const receiver = new PartReceiver(spool, limits);
  try {
    await readBody(req, limits.maxBatchBytes + limits.maxBatchParts * FRAMING_BYTES_PER_PART, async (chunk) => {
      for (const event of reader.push(chunk)) {
        if (event.kind === "part") receiver.begin(event.name);
        else if (event.kind === "data") await receiver.data(event.bytes);
        else receiver.end();
      }
    });
    reader.end();
  } catch (error) {
    if (error instanceof MultipartError) throw midBody(400, "invalid_multipart", `body is not valid multipart/form-data: ${error.message}`);
    throw error;
  }
  return [...receiver.parts];
}

/** Takes the parts as they come: counts them, bounds their sizes, spools them and checks each hash. */
class PartReceiver {
  /** By hash: a part sent twice is stored once. */
  readonly parts = new Map<string, SpooledPart>();
  private count = 0;
  private total = 0;
  private current: { sha256: string; part: SpooledPart; hash: Hash } | undefined;

  constructor(
    private readonly spool: BlobSpool,
    private readonly limits: Limits,
  ) {}

  begin(name: string): void {
    if (!isSha256(name)) throw misnamed(name);
    if (++this.count > this.limits.maxBatchParts) throw tooManyParts(this.limits.maxBatchParts);
    this.current = { sha256: name, part: { offset: this.spool.end, size: 0 }, hash: createHash("sha256") };
  }

  async data(bytes: Buffer): Promise<void> {
    const { sha256, part, hash } = this.current!;
    part.size += bytes.length;
    this.total += bytes.length;
    if (part.size > this.limits.maxBlobBytes) {
      throw midBody(413, "too_large", `part ${sha256} holds over ${this.limits.maxBlobBytes} bytes, this server's limit a blob`, {
        sha256,
      });
    }
    if (this.total > this.limits.maxBatchBytes)
      throw midBody(413, "too_large", `parts hold more than ${this.limits.maxBatchBytes} bytes: send fewer`);
    hash.update(bytes);
    await this.spool.append(bytes);
  }

  end(): void {
    const { sha256, part, hash } = this.current!;
    const actual = hash.digest("hex");
    if (actual !== sha256) throw midBody(400, "hash_mismatch", `part ${sha256} has SHA-256 ${actual}`, { sha256 });
    if (!this.parts.has(sha256)) this.parts.set(sha256, part);
    this.current = undefined;
  }
}

/** Answers the asked blobs as multipart/form-data, one part per blob named by its sha256, read as sent. */
export async function getBlobs(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, project: ProjectAccess): Promise<void> {
  const hashes = parseHashList(await readJson(req, ctx.limits.maxJsonBytes), ctx.limits);
  // Sizes first: a request that will be refused reads no blob.
  const sizes = await project.blobSizes(hashes);
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
  await pipeline(multipartBody(project, hashes, heads, tail), res).catch(() => res.destroy());
}

/** The answer's body, blob by blob as read from the store. */
async function* multipartBody(project: ProjectAccess, hashes: string[], heads: Buffer[], tail: Buffer): AsyncGenerator<Uint8Array> {
  for (const [i, sha256] of hashes.entries()) {
    const blob = await project.readBlob(sha256);
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

function tooManyParts(limit: number): HttpError {
  return midBody(413, "too_large", `more than ${limit} parts: at most ${limit} a request`);
}

/** A part whose name is no SHA-256, named (its first 80 characters). */
function misnamed(name: string): HttpError {
  return midBody(
    400,
    "invalid_multipart",
    `a part is named ${JSON.stringify(name.slice(0, 80))}: each part's name must be its SHA-256 in 64 lowercase hex characters`,
  );
}

/** A refusal before the body is read to its end: the rest is not read, so the connection cannot be reused. */
function midBody<C extends WireErrorCode>(
  status: WireErrorStatus<C>,
  code: C,
  message: string,
  extra: Record<string, unknown> = {},
): HttpError<C> {
  return new HttpError(status, code, message, extra, { connection: "close" });
}
