import type * as Undici from "undici";
import type { Reporter } from "../report.js";
import { isSha256 } from "../server/validate.js";
import { isRetryableStatus, parseRetryAfter } from "./retry.js";

/**
 * The project API client (design.md §3): one request per call, no retries (retry.ts does that).
 * One undici Pool per origin with keep-alive. Redirects are never followed: the token is only ever
 * sent to the configured origin. undici is imported on the first request, not at start-up, so
 * that it costs the passthrough nothing.
 */

export interface RemoteFile {
  path: string;
  sha256: string;
  size: number;
}

export interface RemoteTree {
  version: number;
  files: RemoteFile[];
}

export type Change = { op: "put"; path: string; sha256: string; size: number } | { op: "delete"; path: string };

export interface CommitSource {
  agent: string;
  sessionId?: string;
}

export interface ApiClientOptions {
  apiUrl: string;
  projectId: string;
  token?: string;
  requestTimeoutMs: number;
  /** Connections kept to the server; default 6. */
  connections?: number;
  report?: Reporter;
  /** Told about every request that got an answer from the server (any status). */
  onAnswer?: () => void;
}

/**
 * Why a request failed. `retryable`: worth trying again (network, timeout, 408, 429, 5xx).
 * `fatal`: no point in any further request this session (401, 403, 404 project, redirect).
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number | undefined;
  /** The server's error code (`missing_blobs`, `hash_mismatch`, …) or network / timeout / redirect / protocol. */
  readonly code: string;
  readonly retryable: boolean;
  readonly fatal: boolean;
  readonly retryAfterMs: number | undefined;
  /** The parsed JSON error body, when there was one. */
  readonly body: Record<string, unknown> | undefined;

  constructor(
    message: string,
    info: {
      status?: number;
      code: string;
      retryable?: boolean;
      fatal?: boolean;
      retryAfterMs?: number;
      body?: Record<string, unknown>;
      cause?: unknown;
    },
  ) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.status = info.status;
    this.code = info.code;
    this.retryable = info.retryable ?? false;
    this.fatal = info.fatal ?? false;
    this.retryAfterMs = info.retryAfterMs;
    this.body = info.body;
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> | undefined;
}

const MAX_ERROR_BODY = 64 * 1024;
const MAX_LISTING_BODY = 256 * 1024 * 1024;
const MAX_SMALL_BODY = 1024 * 1024;

let undiciModule: Promise<typeof Undici> | undefined;
function loadUndici(): Promise<typeof Undici> {
  undiciModule ??= import("undici");
  return undiciModule;
}

export class ApiClient {
  readonly origin: string;
  /** `/base/api/projects/<id>` (the API URL may carry a path prefix). */
  private readonly base: string;
  private pool: Promise<Undici.Pool> | undefined;
  private closed = false;
  /** Requests under way right now. */
  active = 0;

  constructor(private readonly options: ApiClientOptions) {
    const url = new URL(options.apiUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ApiError(`unsupported API URL scheme ${url.protocol}`, { code: "config", fatal: true });
    }
    if (url.username || url.password) {
      throw new ApiError("the API URL must not contain credentials; use --token", { code: "config", fatal: true });
    }
    this.origin = url.origin;
    this.base = `${url.pathname.replace(/\/+$/, "")}/api/projects/${encodeURIComponent(options.projectId)}`;
  }

  /** GET /files: the project's current tree (version 0 and no files for a new project). */
  async listFiles(signal?: AbortSignal): Promise<RemoteTree> {
    const answer = await this.request("GET", "/files", { signal, ok: [200], maxBody: MAX_LISTING_BODY });
    const json = answer.json;
    if (!json || typeof json.version !== "number" || !Array.isArray(json.files)) {
      throw this.protocolError("GET /files", "the answer is not { version, files }");
    }
    const files: RemoteFile[] = [];
    for (const item of json.files as unknown[]) {
      const file = item as Partial<RemoteFile> | null;
      if (!file || typeof file.path !== "string" || !isSha256(file.sha256) || typeof file.size !== "number") {
        throw this.protocolError("GET /files", "a file entry is not { path, sha256, size }");
      }
      files.push({ path: file.path, sha256: file.sha256, size: file.size });
    }
    return { version: json.version, files };
  }

  /** HEAD /blobs/{sha256}: does the server have it? */
  async hasBlob(sha256: string, signal?: AbortSignal): Promise<boolean> {
    const answer = await this.request("HEAD", `/blobs/${sha256}`, { signal, ok: [200, 404], blobProbe: true });
    return answer.status === 200;
  }

  /** PUT /blobs/{sha256}: "created" (201) or "present" (200, it was already there). */
  async putBlob(sha256: string, bytes: Uint8Array, signal?: AbortSignal): Promise<"created" | "present"> {
    const answer = await this.request("PUT", `/blobs/${sha256}`, {
      signal,
      ok: [200, 201],
      body: bytes,
      headers: { "content-type": "application/octet-stream" },
    });
    return answer.status === 201 ? "created" : "present";
  }

  /** POST /commits. Errors: 422 `missing_blobs` (body.missing), 400 `invalid_path` (body.path), … */
  async commit(changes: Change[], source: CommitSource, idempotencyKey: string, signal?: AbortSignal): Promise<{ version: number }> {
    const answer = await this.request("POST", "/commits", {
      signal,
      ok: [200],
      body: JSON.stringify({ changes, source }),
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
    });
    const version = answer.json?.version;
    if (typeof version !== "number") throw this.protocolError("POST /commits", "the answer has no version");
    return { version };
  }

  /**
   * PUT /sessions/{id}/events?offset=N (v1.1): appends a piece of the agent's stream. Returns the
   * server's transcript length: after the append (200), or as it is (409 `offset_mismatch`).
   * A 404 or 405 here means a v1 server (not a missing project): a non-fatal ApiError.
   */
  async appendEvents(sessionId: string, offset: number, bytes: Uint8Array, signal?: AbortSignal): Promise<{ appended: boolean; length: number }> {
    const answer = await this.request("PUT", `/sessions/${encodeURIComponent(sessionId)}/events?offset=${offset}`, {
      signal,
      ok: [200, 409],
      body: bytes,
      headers: { "content-type": "application/x-ndjson" },
      blobProbe: true,
    });
    const length = answer.json?.length;
    if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
      throw this.protocolError("PUT /sessions/…/events", "the answer has no length");
    }
    return { appended: answer.status === 200, length };
  }

  /** Lets the requests under way finish (at most `graceMs`), then closes the connections. */
  async close(graceMs = 1000): Promise<void> {
    this.closed = true;
    const pending = this.pool;
    this.pool = undefined;
    if (!pending) return;
    const pool = await pending;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), graceMs)));
    const outcome = await Promise.race([pool.close().then(() => "closed" as const, () => "closed" as const), grace]);
    clearTimeout(timer);
    if (outcome === "late") await pool.destroy().catch(() => undefined);
  }

  private getPool(): Promise<Undici.Pool> {
    this.pool ??= loadUndici().then(
      ({ Pool }) =>
        new Pool(this.origin, {
          connections: this.options.connections ?? 6,
          keepAliveTimeout: 10_000,
          keepAliveMaxTimeout: 60_000,
          headersTimeout: this.options.requestTimeoutMs,
          bodyTimeout: this.options.requestTimeoutMs,
          connect: { timeout: this.options.requestTimeoutMs },
        }),
    );
    return this.pool;
  }

  private async request(
    method: "GET" | "HEAD" | "PUT" | "POST",
    sub: string,
    init: {
      signal?: AbortSignal;
      ok: number[];
      body?: string | Uint8Array;
      headers?: Record<string, string>;
      maxBody?: number;
      blobProbe?: boolean;
    },
  ): Promise<Answer> {
    if (this.closed) throw new ApiError("the API client is closed", { code: "closed" });
    init.signal?.throwIfAborted();
    const label = `${method} ${shortPath(sub)}`;
    const started = performance.now();
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;

    this.active++;
    try {
      return await this.attempt(method, sub, init, label, started, headers);
    } finally {
      this.active--;
    }
  }

  private async attempt(
    method: "GET" | "HEAD" | "PUT" | "POST",
    sub: string,
    init: { signal?: AbortSignal; ok: number[]; body?: string | Uint8Array; maxBody?: number; blobProbe?: boolean },
    label: string,
    started: number,
    headers: Record<string, string>,
  ): Promise<Answer> {
    let response: Undici.Dispatcher.ResponseData;
    try {
      const pool = await this.getPool();
      response = await pool.request({
        method,
        path: this.base + sub,
        headers,
        body: init.body,
        signal: init.signal,
        headersTimeout: this.options.requestTimeoutMs,
        bodyTimeout: this.options.requestTimeoutMs,
      });
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      const failure = networkError(label, error, this.options.requestTimeoutMs);
      this.debug(label, failure.code, started);
      throw failure;
    }

    const status = response.statusCode;
    let json: Record<string, unknown> | undefined;
    try {
      const ok = init.ok.includes(status);
      const limit = ok ? (init.maxBody ?? MAX_SMALL_BODY) : MAX_ERROR_BODY;
      const text = method === "HEAD" ? "" : await readText(response.body, limit, !ok);
      if (text !== "") {
        try {
          const parsed: unknown = JSON.parse(text);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
        } catch {
          if (ok && method !== "PUT") throw this.protocolError(label, "the answer is not JSON");
        }
      } else if (method === "HEAD") {
        await response.body.dump();
      }
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      if (error instanceof ApiError) throw error;
      const failure = networkError(label, error, this.options.requestTimeoutMs);
      this.debug(label, `${status} then ${failure.code}`, started);
      throw failure;
    }

    this.options.onAnswer?.();
    this.debug(label, String(status), started);
    if (init.ok.includes(status)) return { status, headers: response.headers, json };
    throw this.httpError(label, status, response.headers, json, init.blobProbe === true);
  }

  private httpError(
    label: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    json: Record<string, unknown> | undefined,
    blobProbe: boolean,
  ): ApiError {
    // The server's words end up in logs and in the journal: a server that quotes the request's
    // Authorization header back must not get the token written to disk.
    const code = typeof json?.error === "string" ? this.scrub(json.error) : `http_${status}`;
    const serverMessage = typeof json?.message === "string" ? `: ${this.scrub(json.message)}` : "";
    const project = this.options.projectId;
    const info = { status, code, body: json };
    if (status >= 300 && status < 400) {
      const location = firstHeader(headers.location);
      let target = "no Location";
      if (location) {
        try {
          target = new URL(location, this.origin).origin;
        } catch {
          target = "an invalid Location";
        }
      }
      return new ApiError(
        `${label}: the server answered ${status}, a redirect to ${target}; redirects are not followed ` +
          `(the token is only sent to ${this.origin}); check --api-url`,
        { ...info, code: "redirect", fatal: true },
      );
    }
    if (status === 401) {
      const why = this.options.token === undefined ? "the server requires a token (--token or USPARK_TOKEN)" : "the server rejected the token (check --token or USPARK_TOKEN)";
      return new ApiError(`401 unauthorized: ${why}`, { ...info, fatal: true });
    }
    if (status === 403) {
      return new ApiError(`403 forbidden: the token has no access to project ${project}`, { ...info, fatal: true });
    }
    if (status === 404 && !blobProbe) {
      const why =
        code === "project_not_found"
          ? `unknown project id ${project} (check --project-id)`
          : `no project API at ${this.options.apiUrl} (check --api-url)`;
      return new ApiError(`404 not found: ${why}`, { ...info, fatal: true });
    }
    const retryable = isRetryableStatus(status);
    const retryAfterMs = retryable ? parseRetryAfter(firstHeader(headers["retry-after"])) : undefined;
    return new ApiError(`${label}: ${status} ${code}${serverMessage}`, { ...info, retryable, retryAfterMs });
  }

  /** Text from the server with the token (if it is quoted back) replaced by `***`. */
  private scrub(text: string): string {
    const token = this.options.token;
    return token ? text.split(token).join("***") : text;
  }

  private protocolError(label: string, why: string): ApiError {
    return new ApiError(`${label}: ${why}`, { code: "protocol" });
  }

  private debug(label: string, outcome: string, started: number): void {
    const ms = Math.round(performance.now() - started);
    this.options.report?.debug("request", `${label} ${outcome} ${ms}ms`, { request: label, outcome, ms });
  }
}

/** `/blobs/<64 hex>` → `/blobs/abcdef012345…` for readable logs. */
function shortPath(sub: string): string {
  return sub.replace(/[0-9a-f]{64}/, (sha) => `${sha.slice(0, 12)}…`);
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);

function networkError(label: string, error: unknown, timeoutMs: number): ApiError {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) {
    return new ApiError(`${label}: no answer within ${timeoutMs} ms`, { code: "timeout", retryable: true, cause: error });
  }
  const detail = typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
  return new ApiError(`${label}: network error (${detail})`, { code: "network", retryable: true, cause: error });
}

/** The body as text; past `limit` bytes it is cut off (`truncate`) or refused. */
async function readText(body: Undici.Dispatcher.ResponseData["body"], limit: number, truncate: boolean): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      if (truncate) break;
      throw new ApiError(`the answer is larger than ${limit} bytes`, { code: "protocol" });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
