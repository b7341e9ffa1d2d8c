import { secretMasker, type Reporter } from "../report/reporter.js";
import { isSha256 } from "../api/validate.js";
import { multipartChunks, multipartType, newBoundary } from "../api/multipart.js";
import { multipartBoundary, MultipartError, MultipartReader } from "../api/multipart-reader.js";
import { bodyLength, Connections, eachChunk, readBody, type BodyOptions, type IncomingAnswer } from "./connections.js";
import { ApiError, contradiction, networkError, type UnlistedCode } from "./api-error.js";
import type { WireErrorCode } from "../api/errors.js";
import { requestDeadline } from "./deadline.js";
import { isRetryableStatus, parseRetryAfter } from "./retry.js";

export { ApiError } from "./api-error.js";
import type { ApiVersion, Change, CommitFeed, CommitSource, Listing, ProjectSummary, RemoteFile } from "../api/types.js";
import { isProjectSummary, isShaList, isVersion, parseFeed, type FeedFault } from "../api/answers.js";

/**
 * The project API client (docs/api.md): one request per call, no retries (retry.ts does that).
 * Kept-alive connections to the one origin (connections.ts). Redirects are never followed: the
 * token is only ever sent to the configured origin.
 */

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

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> | undefined;
  /** The parts of a multipart answer (`multipart: true`), by name. */
  parts?: Map<string, Uint8Array>;
  /** The bytes of a raw answer (`raw: true`). */
  raw?: Uint8Array;
}

type Method = "GET" | "HEAD" | "PUT" | "POST";

interface RequestInit {
  signal?: AbortSignal;
  ok: number[];
  body?: string | Uint8Array | readonly Uint8Array[];
  headers?: Record<string, string>;
  maxBody?: number;
  /** A 404 means "no such blob", not "no such project". */
  blobProbe?: boolean;
  /** A v1.1 route: 404/405 mean "this server does not have it" (code `unsupported`). */
  optional?: boolean;
  /** A successful answer is multipart/form-data. */
  multipart?: boolean;
  /** A successful answer is raw bytes. */
  raw?: boolean;
  /** Bytes the answer is expected to carry (downloads), for the deadline. */
  answerBytes?: number;
  /** The server may rightly hold its answer this long (a long poll): added to the deadlines. */
  answerWithinMs?: number;
  /** The path is under `<api>/api/projects`, not under this project. */
  projectsRoute?: boolean;
}

/**
 * The slowest transfer rate a request is allowed before its hard deadline: 256 KiB/s (about
 * 2 Mbit/s). Every request, whatever it carries, gets at least the request timeout in total.
 */
export const MIN_BYTES_PER_SECOND = 256 * 1024;

/** A request's hard deadline, ms: max(request timeout, what its bytes take at the slowest allowed rate). */
export function requestDeadlineMs(requestTimeoutMs: number, bytes = 0): number {
  return Math.max(requestTimeoutMs, transferTimeMs(bytes));
}

/** What `bytes` take at the slowest rate allowed, ms. */
export function transferTimeMs(bytes: number): number {
  return Math.ceil((bytes / MIN_BYTES_PER_SECOND) * 1000);
}

const MAX_ERROR_BODY = 64 * 1024;
const MAX_LISTING_BODY = 256 * 1024 * 1024;
const MAX_SMALL_BODY = 1024 * 1024;

export class ApiClient {
  readonly origin: string;
  /** `/base/api/projects` (the API URL may carry a path prefix). */
  private readonly projects: string;
  /** `/base/api/projects/<id>`. */
  private readonly base: string;
  private connections: Connections | undefined;
  private closed = false;
  /**
   * Hard deadlines (epoch ms) of the requests under way that were given more than the request
   * timeout, one entry per request (two equal deadlines are two entries).
   */
  private readonly longDeadlines = new Map<object, number>();

  constructor(private readonly options: ApiClientOptions) {
    const url = new URL(options.apiUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ApiError(`unsupported API URL scheme ${url.protocol}`, { code: "config", fatal: true });
    }
    if (url.username || url.password) {
      throw new ApiError("the API URL must not contain credentials; use --token", { code: "config", fatal: true });
    }
    this.origin = url.origin;
    this.projects = `${url.pathname.replace(/\/+$/, "")}/api/projects`;
    this.base = `${this.projects}/${encodeURIComponent(options.projectId)}`;
  }

  /**
   * GET /files (`?version=N`: as of version N, v1.2): the project's tree, and the API version the
   * server says it speaks ("1.2"; an older server says nothing: "1").
   */
  async listFiles(signal?: AbortSignal, version?: number): Promise<Listing> {
    const query = version === undefined ? "" : `?version=${version}`;
    const answer = await this.request("GET", `/files${query}`, { signal, ok: [200], maxBody: MAX_LISTING_BODY });
    const json = answer.json;
    if (!json || !isVersion(json.version) || !Array.isArray(json.files)) {
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
    // A 1.3 server is a 1.2 one with a history the client can check (its chain hash).
    const api: ApiVersion = json.api === "1.2" || json.api === "1.3" ? "1.2" : "1";
    return isSha256(json.chain) ? { version: json.version, files, api, chain: json.chain } : { version: json.version, files, api };
  }

  /**
   * GET /commits (v1.2): the commits after `since`, oldest first, and the head version; with
   * `waitMs`, the server answers as soon as there is one (a long poll). Checked here: versions
   * that go back or repeat are a protocol error, never a loop.
   */
  async commitFeed(
    since: number,
    options: { limit?: number; waitMs?: number; path?: string } = {},
    signal?: AbortSignal,
  ): Promise<CommitFeed> {
    const query = new URLSearchParams({ since: String(since) });
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.path !== undefined) query.set("path", options.path);
    if (options.waitMs !== undefined) query.set("wait", String(options.waitMs));
    const answer = await this.request("GET", `/commits?${query}`, {
      signal,
      ok: [200],
      optional: true,
      maxBody: MAX_LISTING_BODY,
      // A long poll may rightly answer only at the end of its wait.
      answerWithinMs: options.waitMs,
    });
    const fail = (why: string, fault: FeedFault) =>
      fault === "contradiction" ? contradiction(why, "GET /commits") : this.protocolError("GET /commits", why);
    return parseFeed(answer.json, since, fail, { filtered: options.path !== undefined });
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

  /**
   * POST /blobs (v1.1): one multipart part per blob, named by its sha256. Answers which were
   * stored and which the server already had. ApiError `unsupported`: a v1 server.
   */
  async postBlobs(
    blobs: readonly { sha256: string; bytes: Uint8Array }[],
    signal?: AbortSignal,
  ): Promise<{ stored: string[]; present: string[] }> {
    const boundary = newBoundary();
    const answer = await this.request("POST", "/blobs", {
      signal,
      ok: [200],
      optional: true,
      body: multipartChunks(boundary, blobs),
      headers: { "content-type": multipartType(boundary) },
    });
    const stored = answer.json?.stored;
    const present = answer.json?.present;
    if (!isShaList(stored) || !isShaList(present)) throw this.protocolError("POST /blobs", "the answer is not { stored, present }");
    return { stored, present };
  }

  /**
   * POST /blobs/get (v1.1): the blobs as multipart parts named by sha256 (not yet verified).
   * ApiError `unsupported`: a v1 server; 404 `not_found` with body.missing; 413 ask for fewer.
   */
  async getBlobs(hashes: readonly string[], expectedBytes: number, signal?: AbortSignal): Promise<Map<string, Uint8Array>> {
    const answer = await this.request("POST", "/blobs/get", {
      signal,
      ok: [200],
      optional: true,
      multipart: true,
      answerBytes: expectedBytes,
      maxBody: Math.max(expectedBytes * 2, MAX_SMALL_BODY) + 1024 * 1024,
      body: JSON.stringify({ sha256: hashes }),
      headers: { "content-type": "application/json", accept: "multipart/form-data, application/json" },
    });
    return answer.parts ?? new Map();
  }

  /** GET /blobs/{sha256}: the blob's bytes (not yet verified). */
  async getBlob(sha256: string, expectedBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    const answer = await this.request("GET", `/blobs/${sha256}`, {
      signal,
      ok: [200],
      raw: true,
      blobProbe: true,
      answerBytes: expectedBytes,
      maxBody: expectedBytes,
      headers: { accept: "application/octet-stream, application/json" },
    });
    return answer.raw!;
  }

  /**
   * The latest hard deadline among requests under way that were given more time than the request
   * timeout (large transfers), or undefined. A trickling small request never extends a flush.
   */
  longTransferDeadline(): number | undefined {
    return this.longDeadlines.size === 0 ? undefined : Math.max(...this.longDeadlines.values());
  }

  /**
   * POST /commits. Errors: 409 `conflict` (v1.2: body.conflicts, body.version: nothing applied),
   * 422 `missing_blobs` (body.missing), 400 `invalid_path` (body.path), 422 `idempotency_key_reused`.
   */
  async commit(
    changes: Change[],
    source: CommitSource,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<{ version: number; chain?: string }> {
    const answer = await this.request("POST", "/commits", {
      signal,
      ok: [200],
      body: JSON.stringify({ changes, source }),
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
    });
    const version = answer.json?.version;
    if (typeof version !== "number") throw this.protocolError("POST /commits", "the answer has no version");
    const chain = answer.json?.chain;
    return isSha256(chain) ? { version, chain } : { version };
  }

  /**
   * PUT /sessions/{id}/events?offset=N (v1.1): appends a piece of the agent's stream. Returns the
   * server's transcript length: after the append (200), or as it is (409 `offset_mismatch`).
   * ApiError `unsupported`: a v1 server (a 404 `project_not_found` stays a fatal unknown project).
   */
  async appendEvents(
    sessionId: string,
    offset: number,
    bytes: Uint8Array,
    signal?: AbortSignal,
  ): Promise<{ appended: boolean; length: number }> {
    const answer = await this.request("PUT", `/sessions/${encodeURIComponent(sessionId)}/events?offset=${offset}`, {
      signal,
      ok: [200, 409],
      body: bytes,
      headers: { "content-type": "application/x-ndjson" },
      optional: true,
    });
    const length = answer.json?.length;
    if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
      throw this.protocolError("PUT /sessions/…/events", "the answer has no length");
    }
    return { appended: answer.status === 200, length };
  }

  /** GET /api/projects (v1.2): the projects the token may see. ApiError `unsupported`: an older server. */
  async listProjects(signal?: AbortSignal): Promise<ProjectSummary[]> {
    const answer = await this.request("GET", "", { signal, ok: [200], optional: true, projectsRoute: true, maxBody: MAX_LISTING_BODY });
    const projects = answer.json?.projects;
    if (!Array.isArray(projects) || !projects.every(isProjectSummary))
      throw this.protocolError("GET /api/projects", "the answer is not { projects }");
    return projects;
  }

  /** POST /api/projects (v1.2): "created", or "exists" (409). ApiError `unsupported`: an older server. */
  async createProject(id: string, signal?: AbortSignal): Promise<"created" | "exists"> {
    const answer = await this.request("POST", "", {
      signal,
      ok: [200, 201, 409],
      optional: true,
      projectsRoute: true,
      body: JSON.stringify({ id }),
      headers: { "content-type": "application/json" },
    });
    return answer.status === 409 ? "exists" : "created";
  }

  /** Lets the requests under way finish (at most `graceMs`), then closes the connections. */
  async close(graceMs = 1000): Promise<void> {
    this.closed = true;
    await this.connections?.close(graceMs);
    this.connections = undefined;
  }

  private getConnections(): Connections {
    this.connections ??= new Connections(this.origin, {
      connections: this.options.connections ?? 6,
      keepAliveMs: 10_000,
      connectTimeoutMs: this.options.requestTimeoutMs,
    });
    return this.connections;
  }

  private async request(method: Method, sub: string, init: RequestInit): Promise<Answer> {
    if (this.closed) throw new ApiError("the API client is closed", { code: "closed" });
    init.signal?.throwIfAborted();
    // Project routes are named from the project (`GET /files`); the projects route by itself.
    const label = `${method} ${init.projectsRoute ? `/api/projects${sub}` : shortPath(sub)}`;
    const started = performance.now();
    const headers: Record<string, string> = { accept: "application/json", ...init.headers };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;

    // The whole request, answer included, has a hard deadline: idle timeouts alone let a server
    // that trickles one byte a second hold a request (and the flush behind it) forever. It is
    // sized by the bytes the request moves, measured from the body whenever it can be.
    const { requestTimeoutMs } = this.options;
    const sent = bodyLength(init.body);
    const held = init.answerWithinMs ?? 0;
    const deadlineMs = requestDeadlineMs(requestTimeoutMs, sent + (init.answerBytes ?? 0)) + held;
    // No answer can come before the body is sent: the wait for the headers gets the time the
    // body takes at the slowest allowed rate (the header timer also runs while it is sent).
    const headersTimeoutMs = requestDeadlineMs(requestTimeoutMs, sent) + held;
    const deadline = requestDeadline(init.signal, deadlineMs);
    const token = {};
    if (deadlineMs > requestTimeoutMs) this.longDeadlines.set(token, Date.now() + deadlineMs);
    try {
      return await this.attempt(method, sub, { ...init, signal: deadline.signal }, label, started, headers, headersTimeoutMs);
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      if (deadline.expired) {
        this.debug(label, "deadline", started);
        throw new ApiError(`${label}: no complete answer within ${deadlineMs} ms`, { code: "timeout", retryable: true, cause: error });
      }
      throw error;
    } finally {
      deadline.dispose();
      this.longDeadlines.delete(token);
    }
  }

  private async attempt(
    method: Method,
    sub: string,
    init: RequestInit,
    label: string,
    started: number,
    headers: Record<string, string>,
    headersTimeoutMs: number,
  ): Promise<Answer> {
    let response: IncomingAnswer;
    try {
      response = await this.getConnections().request({
        method,
        path: (init.projectsRoute ? this.projects : this.base) + sub,
        headers,
        body: init.body,
        signal: init.signal,
        headersTimeoutMs,
      });
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      const headersTimedOut = (error as { code?: unknown })?.code === "HEADERS_TIMEOUT";
      const failure = networkError(label, error, headersTimedOut ? headersTimeoutMs : this.options.requestTimeoutMs);
      this.debug(label, String(failure.code), started);
      throw failure;
    }

    const status = response.status;
    const ok = init.ok.includes(status);
    const answer: Answer = { status, headers: response.headers, json: undefined };
    try {
      if (ok && init.raw) answer.raw = await this.readBytes(response, init.maxBody ?? MAX_SMALL_BODY, false);
      else if (ok && init.multipart) answer.parts = await this.readParts(label, response, init.maxBody ?? MAX_SMALL_BODY);
      else answer.json = await this.readJson(label, method, response, ok, init.maxBody);
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      if (error instanceof ApiError) throw error;
      const failure = networkError(label, error, this.options.requestTimeoutMs);
      this.debug(label, `${status} then ${failure.code}`, started);
      throw failure;
    }

    this.options.onAnswer?.();
    this.debug(label, String(status), started);
    if (ok) return answer;
    throw this.httpError(label, status, response.headers, answer.json, init);
  }

  private async readJson(
    label: string,
    method: Method,
    response: IncomingAnswer,
    ok: boolean,
    maxBody?: number,
  ): Promise<Record<string, unknown> | undefined> {
    const limit = method === "HEAD" ? 0 : ok ? (maxBody ?? MAX_SMALL_BODY) : MAX_ERROR_BODY;
    const text = (await this.readBytes(response, limit, !ok)).toString("utf8");
    if (text === "") return undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      if (ok && method !== "PUT") throw this.protocolError(label, "the answer is not JSON");
    }
    return undefined;
  }

  /**
   * A multipart answer, size-checked, read as it comes: each part is a view of the chunk it came
   * in, or its pieces joined (Response.formData() held the body three times over, and a copy of
   * each part besides).
   */
  private async readParts(label: string, response: IncomingAnswer, limit: number): Promise<Map<string, Uint8Array>> {
    const type = firstHeader(response.headers["content-type"]) ?? "";
    const boundary = multipartBoundary(type);
    if (boundary === undefined) {
      response.body.destroy();
      throw this.protocolError(label, `the answer is ${type || "untyped"}, not multipart/form-data with a boundary`);
    }
    const reader = new MultipartReader(boundary);
    const parts = new Map<string, Uint8Array>();
    let name = "";
    let pieces: Buffer[] = [];
    try {
      await eachChunk(response.body, this.bodyOptions(limit, false), (chunk) => {
        for (const event of reader.push(chunk)) {
          if (event.kind === "part") [name, pieces] = [event.name, []];
          else if (event.kind === "data") pieces.push(event.bytes);
          else parts.set(name, pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
        }
      });
      reader.end();
    } catch (error) {
      if (error instanceof MultipartError) throw this.protocolError(label, `the multipart answer cannot be read: ${error.message}`);
      throw error;
    }
    return parts;
  }

  private httpError(
    label: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    json: Record<string, unknown> | undefined,
    init: RequestInit,
  ): ApiError {
    // The server's words end up in logs and in the journal: a server that quotes the request's
    // Authorization header back must not get the token written to disk.
    // A code the API's list does not hold (another server's) is kept as sent, typed apart.
    const code = typeof json?.error === "string" ? (this.scrub(json.error) as WireErrorCode | UnlistedCode) : (`http_${status}` as const);
    const message = typeof json?.message === "string" ? this.scrub(json.message) : undefined;
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
      const why =
        this.options.token === undefined
          ? "the server requires a token (--token or USPARK_TOKEN)"
          : "the server rejected the token (check --token or USPARK_TOKEN)";
      return new ApiError(`401 unauthorized: ${why}`, { ...info, fatal: true });
    }
    if (status === 403) {
      // The server says why (a read token, another project); else the likeliest reason.
      return new ApiError(`403 forbidden: ${message ?? `the token has no access to project ${project}`}`, { ...info, fatal: true });
    }
    if (status === 421) {
      // A server that does not serve this name (docs/api.md, "Host and Origin"): no retry helps.
      return new ApiError(`421 misdirected: ${message ?? `the server does not answer to ${this.origin}`}`, { ...info, fatal: true });
    }
    if (init.optional && (status === 405 || (status === 404 && code !== "project_not_found" && !Array.isArray(json?.missing)))) {
      return new ApiError(`${label}: ${status}, the server does not have this route (an API v1 server)`, { ...info, code: "unsupported" });
    }
    if (status === 404 && !init.blobProbe && !(init.optional && Array.isArray(json?.missing))) {
      const why =
        code === "project_not_found"
          ? `unknown project id ${project} (check --project-id)`
          : `no project API at ${this.options.apiUrl} (check --api-url)`;
      return new ApiError(`404 not found: ${why}`, { ...info, fatal: true });
    }
    const retryable = isRetryableStatus(status);
    const retryAfterMs = retryable ? parseRetryAfter(firstHeader(headers["retry-after"])) : undefined;
    return new ApiError(`${label}: ${status} ${code}${message === undefined ? "" : `: ${message}`}`, { ...info, retryable, retryAfterMs });
  }

  /** Text from the server with the token (if it is quoted back) replaced by `***`. */
  private scrub(text: string): string {
    const token = this.options.token;
    return token ? secretMasker(token)(text) : text;
  }

  /** The answer's body; past `limit` bytes it is cut off (`truncate`) or refused. */
  private readBytes(response: IncomingAnswer, limit: number, truncate: boolean): Promise<Buffer> {
    return readBody(response.body, this.bodyOptions(limit, truncate));
  }

  private bodyOptions(limit: number, truncate: boolean): BodyOptions {
    const tooLarge = () => new ApiError(`the answer is larger than ${limit} bytes`, { code: "protocol" });
    return { limit, truncate, idleMs: this.options.requestTimeoutMs, tooLarge };
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
