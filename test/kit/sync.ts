import { IgnoreEngine } from "../../src/ignore/engine.js";
import { createHash } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import { Reporter } from "../../src/report/reporter.js";
import { MEMORY_TMPDIR } from "./memory-tmpdir.js";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { createProject } from "./server.js";
import type { SyncOptions } from "../../src/sync/index.js";
import type { CommitFeed, CommitRecord } from "../../src/api/types.js";

export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

/** A fresh real temp directory (under `parent`, the system's temp dir by default), removed by the returned cleanup. */
export async function tempDir(prefix = "uspark-sync-", parent = tmpdir()): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(parent, prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface LogRecord {
  level: string;
  event: string;
  message: string;
  [field: string]: unknown;
}

/** A Reporter writing NDJSON into memory; `text` is everything written, for secret checks. */
export function captureReporter(secrets: string[] = []) {
  const records: LogRecord[] = [];
  let text = "";
  const reporter = new Reporter({
    format: "json",
    verbosity: "verbose",
    secrets,
    stream: {
      write(chunk: string) {
        text += chunk;
        for (const line of chunk.split("\n")) if (line) records.push(JSON.parse(line) as LogRecord);
      },
    },
  });
  return { reporter, records, text: () => text, events: (event: string) => records.filter((r) => r.event === event) };
}

export { eventually } from "./wait.js";

export interface RefServer extends RunningServer {
  requests: { method: string; url: string; status: number }[];
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * The reference server on 127.0.0.1 over a temp data dir (in `dataParent`, the temp dir by
 * default), with the projects the tests push to already created (`projects`, default "p" and
 * "p1"; `[]` for none), as a user would create them.
 */
export async function startRef(
  token?: string,
  extra: { maxBlobBytes?: number; projects?: string[]; dataParent?: string } = {},
): Promise<RefServer> {
  const { projects = ["p", "p1"], dataParent, ...options } = extra;
  const { dir, cleanup } = await tempDir("uspark-data-", dataParent);
  const requests: RefServer["requests"] = [];
  const server = await startServer({
    dataDir: dir,
    port: 0,
    host: "127.0.0.1",
    token,
    ...options,
    onRequest: (e) => requests.push({ method: e.method, url: e.url, status: e.status }),
  });
  for (const id of projects) await createProject(server.url, id, token ? { authorization: `Bearer ${token}` } : {});
  requests.length = 0;
  return Object.assign(server, {
    requests,
    dataDir: dir,
    async stop() {
      await server.close();
      await cleanup();
    },
  });
}

/**
 * `startRef` with its data dir on tmpfs (MEMORY_TMPDIR), for tests that never look at the
 * server's files (the CLI tests start one per test).
 */
export function startMemoryRef(token?: string, extra: { maxBlobBytes?: number; projects?: string[] } = {}): Promise<RefServer> {
  return startRef(token, { ...extra, dataParent: MEMORY_TMPDIR });
}

export interface SeenRequest {
  n: number;
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  at: number;
}

export type Action =
  | { kind: "forward" }
  | { kind: "answer"; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: "reset" }
  | { kind: "stall" }
  /** Forward, but run `before` first (e.g. touch a file while the commit is in flight). */
  | { kind: "forward-after"; before: () => Promise<void> | void }
  /**
   * Forward, let the upstream answer in full (so a commit is applied), then instead of passing
   * the answer on: cut the client's connection ("reset", the default), never answer ("stall":
   * the client times out), or send the headers and half the body, then cut ("half"). The
   * client must retry without the work being applied twice.
   */
  | { kind: "drop"; then?: "reset" | "stall" | "half" };

/** An answer the proxy handed to the client in full (forwarded or made up). */
export interface DeliveredAnswer {
  n: number;
  method: string;
  url: string;
  idempotencyKey: string | undefined;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The answer's body (JSON answers only; blobs are not kept). */
  body: string;
  at: number;
}

export interface ProxyOptions {
  /** Listen on this port (default 0: any free port). */
  port?: number;
  /**
   * false: `seen` lists each request with an empty body (the rule still gets the whole request):
   * for tests that send hundreds of MiB through and read back only methods, URLs and headers.
   */
  keepBodies?: boolean;
}

/**
 * A small HTTP proxy in front of an upstream (the reference server) that can fail requests on
 * demand: `rule(request)` picks an action; undefined forwards. `upstream` may be changed (a
 * restarted server on a new port); `down()` stops accepting connections (clients get
 * ECONNREFUSED) and closes the open ones, `up()` listens again on the same port.
 * `delivered` lists every answer a client received in full.
 */
export async function startProxy(
  upstream: string,
  rule: (req: SeenRequest) => Action | undefined = () => undefined,
  options: ProxyOptions = {},
) {
  const seen: SeenRequest[] = [];
  const delivered: DeliveredAnswer[] = [];
  const sockets = new Set<Socket>();
  let port = options.port ?? 0;
  const proxy = {
    seen,
    delivered,
    rule,
    url: "",
    upstream,
    get isUp() {
      return server.listening;
    },
    /** Stops listening and cuts every open connection. */
    async down() {
      if (!server.listening) return;
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    /** Listens again, on the same port. */
    async up() {
      if (server.listening) return;
      await listen();
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const info: SeenRequest = {
        n: seen.length,
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      seen.push(options.keepBodies === false ? { ...info, body: Buffer.alloc(0) } : info);
      const record = (status: number, body: string, headers: DeliveredAnswer["headers"], at = Date.now()) => {
        const key = info.headers["idempotency-key"];
        delivered.push({
          n: info.n,
          method: info.method,
          url: info.url,
          idempotencyKey: typeof key === "string" ? key : undefined,
          status,
          headers,
          body,
          at,
        });
      };
      const action = proxy.rule(info) ?? { kind: "forward" };
      switch (action.kind) {
        case "answer": {
          const body = action.body === undefined ? "" : JSON.stringify(action.body);
          // Noted before it is written: the client cannot have it earlier than `at`.
          const at = Date.now();
          res.writeHead(action.status, {
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            ...action.headers,
          });
          res.end(body, () => record(action.status, body, { ...action.headers }, at));
          return;
        }
        case "reset":
          req.socket.destroy();
          return;
        case "stall":
          return;
        case "forward-after":
          await action.before();
          forward(info, res, record);
          return;
        case "drop":
          forward(info, res, record, action.then ?? "reset");
          return;
        case "forward":
          forward(info, res, record);
      }
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  function forward(
    info: SeenRequest,
    res: ServerResponse,
    record: (status: number, body: string, headers: DeliveredAnswer["headers"]) => void,
    drop?: "reset" | "stall" | "half",
  ) {
    const target = new URL(proxy.upstream);
    const headers = { ...info.headers, host: target.host };
    const up = httpRequest({ host: target.hostname, port: target.port, method: info.method, path: info.url, headers }, (answer) => {
      const status = answer.statusCode ?? 502;
      const json = String(answer.headers["content-type"] ?? "").startsWith("application/json");
      const parts: Buffer[] = [];
      answer.on("data", (c: Buffer) => {
        if (json) parts.push(c);
      });
      if (drop) {
        // The upstream has done the work once its answer is complete; the client never hears of it.
        const all: Buffer[] = [];
        answer.on("data", (c: Buffer) => all.push(c));
        answer.on("error", () => res.socket?.destroy());
        answer.on("end", () => {
          if (drop === "stall") return;
          if (drop === "half") {
            const body = Buffer.concat(all);
            res.writeHead(status, answer.headers);
            res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
            return;
          }
          res.socket?.destroy();
        });
        return;
      }
      res.on("finish", () => record(status, Buffer.concat(parts).toString(), answer.headers));
      // The upstream died mid-answer (a killed server): the client sees its connection cut.
      answer.on("error", () => res.destroy());
      answer.on("close", () => {
        if (!answer.complete) res.destroy();
      });
      res.writeHead(status, answer.headers);
      answer.pipe(res);
    });
    up.on("error", () => res.destroy());
    up.end(info.body);
  }
  function listen() {
    return new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }
  await listen();
  proxy.url = `http://127.0.0.1:${port}`;
  return proxy;
}

export type Proxy = Awaited<ReturnType<typeof startProxy>>;

/** A server that records every request it gets (to prove nothing reaches it). */
export async function startRecorder() {
  const seen: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"version":0,"files":[]}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    seen,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Options for a sync session against `apiUrl`, with fast timings for tests. */
export function syncOptions(root: string, apiUrl: string, reporter: Reporter, extra: Partial<SyncOptions> = {}): SyncOptions {
  return {
    apiUrl,
    projectId: "p1",
    root,
    requestTimeoutMs: 5000,
    maxFileSize: 50 * 1024 * 1024,
    concurrency: 4,
    debounceMs: 30,
    maxWaitMs: 200,
    source: { agent: "test", sessionId: "s1" },
    report: reporter,
    backoff: { baseMs: 10, capMs: 100, retryAfterCapMs: 60_000 },
    ignore: extra.ignore ?? new IgnoreEngine({ root }),
    ...extra,
  };
}

/** The project's files on the server, as { path: bytes }. */
export async function remoteFiles(apiUrl: string, projectId = "p1", token?: string): Promise<Map<string, Buffer>> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const base = `${apiUrl}/api/projects/${projectId}`;
  const listing = (await (await fetch(`${base}/files`, { headers })).json()) as { files: { path: string; sha256: string }[] };
  // A blob is fetched once however many files hold it (the file-tree fuzzer's burst: 1,500 files, 16 contents).
  const blobs = new Map<string, Buffer>();
  const out = new Map<string, Buffer>();
  for (const file of listing.files) {
    if (!blobs.has(file.sha256))
      blobs.set(file.sha256, Buffer.from(await (await fetch(`${base}/blobs/${file.sha256}`, { headers })).arrayBuffer()));
    out.set(file.path, blobs.get(file.sha256)!);
  }
  return out;
}

export async function remoteVersion(apiUrl: string, projectId = "p1", token?: string): Promise<number> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const listing = (await (await fetch(`${apiUrl}/api/projects/${projectId}/files`, { headers })).json()) as { version: number };
  return listing.version;
}

/** The project's commits after version `since`, oldest first, as the API 1.2 feed lists them. */
export async function remoteCommits(apiUrl: string, projectId = "p1", token?: string, since = 0): Promise<CommitRecord[]> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const answer = await fetch(`${apiUrl}/api/projects/${projectId}/commits?since=${since}`, { headers });
  if (answer.status !== 200) throw new Error(`GET /commits: ${answer.status} ${await answer.text()}`);
  return ((await answer.json()) as CommitFeed).commits;
}

export interface TestProject {
  /** A fresh real temp dir per test. */
  root: string;
  /** The reference server per test. */
  server: RefServer;
  /** A capturing reporter per test (masking the token). */
  log: ReturnType<typeof captureReporter>;
}

/** Registers, for each test of the file, its own temp root, reference server and reporter. */
export function useTestProject(options: { token?: string; prefix?: string } = {}): TestProject {
  const project = {} as TestProject;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: project.root, cleanup } = await tempDir(options.prefix));
    project.server = await startMemoryRef(options.token);
    project.log = captureReporter(options.token ? [options.token] : []);
  });
  afterEach(async () => {
    await project.server.stop();
    await cleanup();
  });
  return project;
}
/** A commit request (POST /commits), not a v1.1 blob pack (POST /blobs, POST /blobs/get). */
export const isCommit = (req: { method: string; url: string }) => req.method === "POST" && /\/commits(\?|$)/.test(req.url);

/** A blob upload: PUT /blobs/{sha} (v1) or a pack, POST /blobs (v1.1). */
export const isBlobUpload = (req: { method: string; url: string }) =>
  (req.method === "PUT" && /\/blobs\/[0-9a-f]{64}$/.test(req.url)) || (req.method === "POST" && /\/blobs$/.test(req.url));

/** A blob download: GET /blobs/{sha} (v1) or a pack, POST /blobs/get (v1.1). */
export const isBlobDownload = (req: { method: string; url: string }) =>
  (req.method === "GET" && /\/blobs\/[0-9a-f]{64}$/.test(req.url)) || (req.method === "POST" && /\/blobs\/get$/.test(req.url));

/** The v1.1 routes answered 404 as a v1 server would (a fault-proxy rule). */
export const v1Only = (req: { method: string; url: string }): Action | undefined =>
  req.method === "POST" && /\/blobs(\/get)?$/.test(req.url)
    ? { kind: "answer", status: 404, body: { error: "not_found", message: "no such route" } }
    : undefined;

/**
 * A pass-through to `upstream` (the reference server) that reads each request body at a steady
 * `bytesPerSecond`, like a slow uplink: a large upload takes as long as its bytes take. `reads`
 * records, per request, how long reading its body took.
 */
export async function startSlowReader(upstream: string, bytesPerSecond: number) {
  const sockets = new Set<Socket>();
  const reads: { method: string; url: string; bytes: number; ms: number }[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server = createServer((req, res) => {
    const target = new URL(upstream);
    const up = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    // A client that gives up ends the upstream request too (else the upstream never closes).
    res.on("close", () => up.destroy());
    const started = performance.now();
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      up.write(chunk);
      const wait = started + (bytes / bytesPerSecond) * 1000 - performance.now();
      if (wait > 0) {
        req.pause();
        const timer = setTimeout(() => {
          timers.delete(timer);
          req.resume();
        }, wait);
        timers.add(timer);
      }
    });
    req.on("end", () => {
      reads.push({ method: req.method ?? "", url: req.url ?? "", bytes, ms: performance.now() - started });
      up.end();
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads,
    close: () =>
      new Promise<void>((r) => {
        for (const timer of timers) clearTimeout(timer);
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
