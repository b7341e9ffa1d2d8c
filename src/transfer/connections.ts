import type { Agent, ClientRequest, IncomingHttpHeaders, IncomingMessage, request } from "node:http";
import { UsparkError } from "../errors/base.js";

/** The origin's scheme, chosen once: its module's request function and one kept-alive agent. */
interface Transport {
  agent: Agent;
  send: typeof request;
}

/**
 * Kept-alive connections to one origin, on node:http (https loaded only for an https origin).
 * Chosen over undici by measurement: a CLI run's first undici request costs about 0.35 s of CPU
 * (its module graph and its WebAssembly HTTP parser), more than the rest of a `uspark push`;
 * node:http's parser is built in. Redirects are never followed (node:http never does).
 *
 * Each request has three timers, each failing it with a stable `code`: the connection
 * (CONNECT_TIMEOUT), the answer's headers from the start (HEADERS_TIMEOUT) and the gap between
 * two pieces of its body (BODY_TIMEOUT, see `readBody`).
 */

export interface ConnectionsOptions {
  /** At most this many connections at once. */
  connections: number;
  /** An idle kept-alive connection is closed after this long. */
  keepAliveMs: number;
  connectTimeoutMs: number;
}

export interface OutgoingRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Sent as is, with its content-length. */
  body?: string | Uint8Array | readonly Uint8Array[];
  signal?: AbortSignal;
  headersTimeoutMs: number;
}

export interface IncomingAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

export class TransportError extends UsparkError {
  override readonly name = "TransportError";
  constructor(
    message: string,
    readonly code: "CONNECT_TIMEOUT" | "HEADERS_TIMEOUT" | "BODY_TIMEOUT",
  ) {
    super(message);
  }
}

export class Connections {
  private transport: Promise<Transport> | undefined;
  private readonly inFlight = new Set<ClientRequest>();
  private idle: (() => void) | undefined;

  constructor(
    readonly origin: string,
    private readonly options: ConnectionsOptions,
  ) {}

  /** Resolves with the answer's status and headers; its body is the caller's to read (`readBody`). */
  async request(request: OutgoingRequest): Promise<IncomingAnswer> {
    const { agent, send } = await this.getTransport();
    const url = new URL(request.path, this.origin);
    const headers =
      request.body === undefined ? request.headers : { ...request.headers, "content-length": String(bodyLength(request.body)) };
    return new Promise<IncomingAnswer>((resolve, reject) => {
      const req = send(url, { method: request.method, headers, agent });
      this.track(req);
      const fail = (error: Error) => req.destroy(error);
      const headersTimer = setTimeout(
        () => fail(new TransportError(`no answer headers within ${request.headersTimeoutMs} ms`, "HEADERS_TIMEOUT")),
        request.headersTimeoutMs,
      );
      req.on("socket", (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(
          () => fail(new TransportError(`no connection within ${this.options.connectTimeoutMs} ms`, "CONNECT_TIMEOUT")),
          this.options.connectTimeoutMs,
        );
        socket.once("connect", () => clearTimeout(connectTimer));
        socket.once("close", () => clearTimeout(connectTimer));
      });
      req.on("error", (error) => {
        clearTimeout(headersTimer);
        reject(error);
      });
      req.once("response", (res) => {
        clearTimeout(headersTimer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      if (request.signal) abortOn(req, request.signal);
      for (const chunk of bodyChunks(request.body)) req.write(chunk);
      req.end();
    });
  }

  /** Lets the requests under way finish (at most `graceMs`), then closes every connection. */
  async close(graceMs: number): Promise<void> {
    const pending = this.transport;
    this.transport = undefined;
    if (!pending) return;
    const { agent } = await pending;
    if (this.inFlight.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        timer = setTimeout(resolve, graceMs);
      });
      clearTimeout(timer);
    }
    for (const req of this.inFlight) req.destroy();
    agent.destroy();
  }

  private track(req: ClientRequest): void {
    this.inFlight.add(req);
    req.once("close", () => {
      this.inFlight.delete(req);
      if (this.inFlight.size === 0) this.idle?.();
    });
  }

  private getTransport(): Promise<Transport> {
    this.transport ??= (async () => {
      // Loaded with the first request, not at start: node:http brings its server and agent with it.
      const { Agent, request } = this.origin.startsWith("https:") ? await import("node:https") : await import("node:http");
      // Idle connections neither hold the process open (node:http unrefs them) nor outlive keepAliveMs.
      const agent = new Agent({
        keepAlive: true,
        maxSockets: this.options.connections,
        timeout: this.options.keepAliveMs,
        scheduling: "lifo",
      });
      return { agent, send: request };
    })();
    return this.transport;
  }
}

/**
 * The signal destroys the request (answer included) until it is over, with the AbortError that
 * node:http's own `signal` option gives. Wired by hand: that option's end-of-stream tracking costs
 * 0.05 to 0.2 ms of CPU a request (measured on loopback, 400 small requests; ~1 ms each in all).
 */
function abortOn(req: ClientRequest, signal: AbortSignal): void {
  const onAbort = () =>
    void req.destroy(
      Object.assign(new Error("The operation was aborted", { cause: signal.reason }), { name: "AbortError", code: "ABORT_ERR" }),
    );
  if (signal.aborted) return onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  req.once("close", () => signal.removeEventListener("abort", onAbort));
}

/** A body's bytes: its content-length, and what its deadline is sized by. */
export function bodyLength(body: OutgoingRequest["body"]): number {
  if (body === undefined) return 0;
  if (typeof body === "string") return Buffer.byteLength(body);
  return body instanceof Uint8Array ? body.byteLength : body.reduce((sum, chunk) => sum + chunk.byteLength, 0);
}

function bodyChunks(body: OutgoingRequest["body"]): readonly Uint8Array[] {
  if (body === undefined) return [];
  if (typeof body === "string") return [Buffer.from(body)];
  return body instanceof Uint8Array ? [body] : body;
}

/**
 * The answer's body; past `limit` bytes it is cut off (`truncate`) or refused with `tooLarge()`.
 * A gap longer than `idleMs` between two pieces fails it (BODY_TIMEOUT).
 */
export async function readBody(body: IncomingMessage, options: BodyOptions): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await eachChunk(body, options, (chunk) => chunks.push(chunk));
  return Buffer.concat(chunks);
}

export interface BodyOptions {
  limit: number;
  truncate: boolean;
  idleMs: number;
  tooLarge: () => Error;
}

/** Hands the answer's body on as it comes, chunk by chunk (each a buffer of its own); past `limit` bytes it is cut off (`truncate`) or refused. */
export async function eachChunk(body: IncomingMessage, options: BodyOptions, onChunk: (chunk: Buffer) => void): Promise<void> {
  let size = 0;
  const timer = setTimeout(onIdle, options.idleMs);
  function onIdle(): void {
    body.destroy(new TransportError(`no answer bytes for ${options.idleMs} ms`, "BODY_TIMEOUT"));
  }
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      timer.refresh();
      size += chunk.length;
      if (size > options.limit) {
        body.destroy();
        if (options.truncate) break;
        throw options.tooLarge();
      }
      onChunk(chunk);
    }
  } finally {
    clearTimeout(timer);
  }
}
