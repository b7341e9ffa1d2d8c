// Public entry of the reference server behind `uspark serve`.

import { setMaxListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIP, type AddressInfo, type Socket } from "node:net";
import { resolve } from "node:path";
import { isLoopbackHost } from "../util/loopback.js";
import { escapeControl, redactUrlCredentials, stderrOutput } from "../report/reporter.js";
import { createHandler, type CommitEvent, type Limits } from "./app.js";
import type { DeviceLogins } from "./authority.js";
import { DeviceFlow } from "./device.js";
import { credentialAuthority } from "./tokens.js";
import { FileStore } from "./file/store.js";
import { StoreSetupError, type ProjectStore } from "./store.js";
import type { CredentialStore } from "./credentials.js";
import { FileCredentials } from "./file/credentials.js";
import { createWebHandler } from "./web/handler.js";
import { guardRequests, servedNames, type ServedNames } from "./host-check.js";
import { MAX_BATCH_BYTES, MAX_BATCH_PARTS } from "../api/validate.js";
import { errorCode, errorText } from "../errors/text.js";

export { isLoopbackHost };
export { validateProjectPath, validateProjectId, isSha256, parseCommitRequest } from "../api/validate.js";
export type { Change, CommitRequest, CommitSource } from "../api/types.js";
export type { CommitEvent } from "./app.js";
export { createToken, tokenStatus } from "./tokens.js";
export type { TokenRecord } from "./credentials.js";

export const DEFAULT_MAX_BLOB_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_JSON_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LIMITS: Limits = {
  maxBlobBytes: DEFAULT_MAX_BLOB_BYTES,
  maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
  maxBatchBytes: MAX_BATCH_BYTES,
  maxBatchParts: MAX_BATCH_PARTS,
  maxEventsBytes: 8 * 1024 * 1024,
};

export interface ServerOptions {
  /** The file store's directory; ignored when databaseUrl is set. */
  dataDir?: string;
  /** postgres://… : keep everything in PostgreSQL (several replicas may share it). */
  databaseUrl?: string;
  port: number;
  host?: string;
  /**
   * The URL browsers and clients use when it is not the bound address (a proxy in front): its
   * host is served as well as the loopback names and the bound address (docs/api.md).
   */
  publicUrl?: string;
  /** More host names served, `name` (any port) or `name:port`. */
  allowedHosts?: string[];
  /** The admin token; none: every request without a known scoped token is the admin (loopback only). */
  token?: string;
  /** Seconds a device login is told to wait between polls (tests shorten it). */
  devicePollSeconds?: number;
  /** Device logins that may wait for approval at once (more asking get 429). */
  maxWaitingLogins?: number;
  maxBlobBytes?: number;
  maxJsonBytes?: number;
  maxBatchBytes?: number;
  maxBatchParts?: number;
  maxEventsBytes?: number;
  /** Delay before handling each request, to measure clients over a slow link (benchmarks). */
  latencyMs?: number;
  /**
   * The clock tokens, device logins and web sessions are judged by (epoch ms; Date.now by
   * default): tests move it past an expiry instead of waiting for it. Waits run on real timers.
   */
  now?: () => number;
  onCommit?: (event: CommitEvent) => void;
  onRequest?: (event: { method: string; url: string; status: number; ms: number }) => void;
  onWarning?: (message: string) => void;
  onError?: (error: unknown) => void;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Long polls (GET /commits?wait=) in progress: for monitoring, and to see a client's leave end its wait. */
  waiting(): number;
  /** The device logins waiting for approval (what the /device page does, for tests and embedders). */
  devices: DeviceLogins;
  /** Ends the long polls at once (they answer what they have), lets the other requests finish, then closes the store. */
  close(): Promise<void>;
}

export interface ServeOptions {
  dataDir?: string;
  databaseUrl?: string;
  port: number;
  host?: string;
  publicUrl?: string;
  allowedHosts?: string[];
  token?: string;
  maxBlobBytes?: number;
  latencyMs?: number;
  verbose?: boolean;
  quiet?: boolean;
  /** dataDir is the default store, not one the command named: the start line says so. */
  defaultStore?: boolean;
}

function usageError(message: string): Error {
  return Object.assign(new Error(message), { code: "EUSAGE" });
}

/** Opens the data directory and listens. Port 0 picks a free port. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { host, names } = checkListenOptions(options);
  const store = await openStore(options);
  const closingSignal = new AbortController();
  // Each long poll listens on it while it waits (and stops after): as many as there are clients.
  setMaxListeners(0, closingSignal.signal);
  const { handler, devices } = createHandlers(store, options, closingSignal.signal, names);
  const http = httpServer(withLatency(options.latencyMs ?? 0, handler), options.onRequest);
  try {
    await listen(http.server, options.port, host);
  } catch (error) {
    await store.close();
    throw error;
  }
  const port = (http.server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`,
    port,
    waiting: () => store.waiting(),
    devices,
    close() {
      closingSignal.abort();
      return (closed ??= http.close().then(() => store.close()));
    },
  };
}

/** The host to listen on and the names to serve, once the port and token make sense for them. */
function checkListenOptions({ port, token, host = "127.0.0.1", publicUrl, allowedHosts }: ServerOptions): {
  host: string;
  names: ServedNames;
} {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError(`invalid port: ${port}`);
  if (token === "") throw usageError("the token must not be empty");
  if (token === undefined && !isLoopbackHost(bare)) {
    throw usageError(`refusing to listen on ${bare} without --token: only loopback hosts may go without one`);
  }
  try {
    return { host: bare, names: servedNames(publicUrl, allowedHosts) };
  } catch (error) {
    throw usageError(errorText(error));
  }
}

/** The API's handler, the web view behind it, and the device logins both serve; every request passes the Host and Origin check first. */
function createHandlers(store: ProjectStore, options: ServerOptions, closing: AbortSignal, names: ServedNames) {
  const limits = { ...DEFAULT_LIMITS };
  for (const name of Object.keys(limits) as (keyof Limits)[]) limits[name] = options[name] ?? limits[name];
  const { onCommit, onError, now = Date.now } = options;
  const devices = new DeviceFlow(store.credentials, { interval: options.devicePollSeconds, maxWaiting: options.maxWaitingLogins, now });
  const authority = credentialAuthority(options.token, store.credentials, now);
  const web = createWebHandler({ store, authority, maxFeedBytes: limits.maxJsonBytes, devices, closing, onError, now });
  const handler = createHandler({ store, authority, devices, limits, onCommit, onError, closing, web });
  return { handler: guardRequests(names, handler), devices };
}

/** The HTTP server: each answer told to `onRequest`; `close` lets every connection go as soon as it is idle. */
function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void, onRequest: ServerOptions["onRequest"]) {
  let closing: Promise<void> | undefined;
  const server = createServer((req, res) => {
    const started = performance.now();
    res.on("finish", () => {
      onRequest?.({ method: req.method ?? "", url: req.url ?? "", status: res.statusCode, ms: Math.round(performance.now() - started) });
      // Once closing, a keep-alive connection is let go as soon as its last answer is out.
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
    handler(req, res);
  });
  const unused = connectionsWithoutRequest(server);
  const close = () =>
    (closing ??= new Promise<void>((done, fail) => {
      server.close((error) => (error ? fail(error) : done()));
      server.closeIdleConnections();
      // Never used (a browser's preconnect): not idle to Node, they would hold the close until its 60 s headers timeout.
      for (const socket of unused) socket.destroy();
    }));
  return { server, close };
}

async function openStore(options: Pick<ServerOptions, "dataDir" | "databaseUrl" | "onWarning">): Promise<ProjectStore> {
  const { databaseUrl, dataDir, onWarning } = options;
  if (databaseUrl !== undefined) {
    const { PgStore } = await import("./pg/store.js");
    return PgStore.open(databaseUrl, { onWarning });
  }
  if (dataDir === undefined) throw usageError("give --data <dir> or --db <postgres-url>");
  return FileStore.open(resolve(dataDir), { onWarning });
}

/** The server's connections that have not sent a request yet. */
function connectionsWithoutRequest(server: Server): Set<Socket> {
  const unused = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  server.on("request", (req: IncomingMessage) => unused.delete(req.socket));
  return unused;
}

/**
 * The tokens of a store without serving it (`uspark serve token`): the file store's credentials
 * alone (its projects are not loaded), or the PostgreSQL store, migrated.
 */
export async function openCredentials(
  options: Pick<ServerOptions, "dataDir" | "databaseUrl">,
): Promise<{ credentials: CredentialStore; close(): Promise<void> }> {
  if (options.databaseUrl !== undefined) {
    const store = await openStore(options);
    return { credentials: store.credentials, close: () => store.close() };
  }
  if (options.dataDir === undefined) throw usageError("give --data <dir> or --db <postgres-url>");
  const dataDir = resolve(options.dataDir);
  try {
    return { credentials: await FileCredentials.open(dataDir), close: async () => {} };
  } catch (error) {
    throw new StoreSetupError(`data directory ${dataDir} cannot be used (${errorCode(error) ?? errorText(error)})`);
  }
}

function withLatency<A extends unknown[]>(ms: number, handler: (...args: A) => void): (...args: A) => void {
  return ms > 0 ? (...args) => setTimeout(() => handler(...args), ms) : handler;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      done();
    });
  });
}

/**
 * `uspark serve`: runs the server until SIGINT or SIGTERM, then closes it (in-flight requests
 * finish) and resolves. A second signal gets Node's default behaviour. Rejects with code EUSAGE
 * on bad options.
 */
export async function runServe(options: ServeOptions): Promise<void> {
  // Through the guarded stderr: a reader that went away (EPIPE) silences the log, never the server.
  const stderr = stderrOutput();
  const log = (text: string) => {
    const lines = text.split("\n").map((line) => escapeControl(redactUrlCredentials(line)));
    stderr.write(`uspark serve: ${lines.join("\n")}\n`);
  };
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  const server = await startServer({
    ...options,
    dataDir,
    onCommit: options.quiet
      ? undefined
      : (e) => log(`${e.projectId} is at version ${e.version} (${e.changes} change${e.changes === 1 ? "" : "s"})`),
    onRequest: options.verbose ? (e) => log(`${e.method} ${e.url} ${e.status} ${e.ms}ms`) : undefined,
    onWarning: (message) => log(`warning: ${message}`),
    onError: (error) => log(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  const stopped = new Promise<void>((done, fail) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop).off("SIGTERM", stop);
      if (!options.quiet) log(`${signal} received, closing`);
      server.close().then(done, fail);
    };
    process.on("SIGINT", stop).on("SIGTERM", stop);
  });
  // Only once the signals are handled: whoever waits for this line may signal at once.
  for (const line of startLines(options, server.url, dataDir)) log(line);
  await stopped;
}

/** What `uspark serve` says when it listens: where, on what store, then (unless --quiet) the web view and the next step. */
export function startLines(
  options: Pick<ServeOptions, "databaseUrl" | "token" | "quiet" | "defaultStore" | "publicUrl">,
  url: string,
  dataDir: string | undefined,
): string[] {
  const store =
    options.databaseUrl !== undefined
      ? `db: ${redactUrlCredentials(options.databaseUrl)}`
      : `data: ${dataDir}${options.defaultStore ? ", the default store (--data <dir> or --db <url> for another)" : ""}`;
  const lines = [`listening on ${url} (${store}, token: ${options.token ? "required" : "not required"})`];
  if (options.quiet) return lines;
  const web = `${(options.publicUrl ?? url).replace(/\/+$/, "")}/`;
  const signIn = options.token ? " (sign in with the admin token, or a scoped one)" : "";
  lines.push(`web view: ${web}${signIn}; next: uspark projects create <id>, then pipe an agent into uspark watch-claude --project-id <id>`);
  return lines;
}
