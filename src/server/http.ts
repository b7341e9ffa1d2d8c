import type { IncomingMessage, ServerResponse } from "node:http";
import type { WireErrorCode, WireErrorStatus } from "../api/errors.js";
import { errorText } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * An error answered as `{ error, message, ...extra }` with the given status: a code of the API's
 * list (src/api/errors.ts), with a status that list gives it, or a type error.
 */
export class HttpError<C extends WireErrorCode = WireErrorCode> extends UsparkError<C> {
  constructor(
    readonly status: WireErrorStatus<C>,
    readonly code: C,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function tooLarge(limit: number): HttpError {
  // The rest of the body is not read, so the connection cannot be reused.
  return new HttpError(413, "too_large", `body exceeds ${limit} bytes`, {}, { connection: "close" });
}

function cutShort(): HttpError {
  return new HttpError(400, "invalid_request", "request body was cut short");
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(data)),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(data);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(res, error.status, { error: error.code, message: error.message, ...error.extra }, error.headers);
}

/**
 * Feeds the request body to `onChunk`, one chunk at a time (waiting for a returned promise
 * before reading on). Rejects with 413 as soon as the body is known to exceed `limit`, without
 * reading the rest.
 */
export function readBody(req: IncomingMessage, limit: number, onChunk: (chunk: Buffer) => void | Promise<void>): Promise<void> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  // The client may have gone while the caller was busy (its 'close' would never come again).
  if (req.destroyed) return Promise.reject(cutShort());

  return new Promise((resolve, reject) => {
    let received = 0;
    let settled = false;
    let pending: Promise<void> = Promise.resolve();

    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        req.pause();
        settle(tooLarge(limit));
        return;
      }
      req.pause();
      pending = pending.then(() => onChunk(chunk));
      pending.then(() => settled || req.resume(), settle);
    };
    const onEnd = () => pending.then(() => settle(), settle);
    const onError = () => settle(cutShort());
    // Closed before 'end' (even with every byte received): what is still buffered is lost.
    const onClose = () => {
      if (!req.readableEnded) settle(cutShort());
    };

    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

/** The whole request body, or 413 past `limit` bytes. */
export async function readAll(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await readBody(req, limit, (chunk) => {
    chunks.push(chunk);
  });
  return Buffer.concat(chunks);
}

export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const body = await readAll(req, limit);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new HttpError(400, "invalid_json", `body is not valid JSON: ${errorText(error)}`);
  }
}
