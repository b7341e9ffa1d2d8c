import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { request as httpRequest, type RequestOptions } from "node:http";
import { join } from "node:path";
import { afterAll, onTestFinished } from "vitest";
import type { Pool, QueryResultRow } from "pg";
import { requireCjs } from "../../src/util/cjs.js";
import { packedHashes } from "../../src/server/file/packs.js";
import { querySchema, type PgCluster } from "./pg-cluster.js";
import { MEMORY_TMPDIR } from "./memory-tmpdir.js";
import { startServer, type RunningServer, type ServerOptions } from "../../src/server/index.js";

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export async function tempDir(parent = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(parent, "uspark-server-test-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file under `dir`, relative, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** A request whose path and headers are sent exactly as given (fetch() would normalize "." and "..", and set its own Host). */
export function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Sends `chunk` again and again, up to `total` bytes then `last`, until the server answers; the
 * answer's status, or the error code when the connection closed before the answer was read (a
 * server that refuses early closes it while the sender still writes), and the bytes sent.
 */
export function sendUntilAnswered(
  url: string,
  options: RequestOptions,
  chunk: Buffer,
  total: number,
  last?: Buffer,
): Promise<{ outcome: number | string; written: number }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, options);
    let written = 0;
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      res.resume();
      resolve({ outcome: res.statusCode!, written });
    });
    req.on("error", (error: NodeJS.ErrnoException) => answered || resolve({ outcome: error.code ?? error.message, written }));
    const pump = () => {
      while (!answered && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end(last);
    };
    pump();
  });
}

export type TestServer = Awaited<ReturnType<typeof testServer>>;

export interface TestServerOptions extends Partial<ServerOptions> {
  /** Run on a fresh schema of this PostgreSQL cluster (`--db`) instead of a data dir. */
  pg?: () => PgCluster;
  /** Projects created at start (POST /api/projects); ["demo"] unless told otherwise. */
  projects?: string[];
}

/** Creates a project through the API (POST /api/projects), failing unless it answers 201. */
export async function createProject(url: string, id: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${url}/api/projects`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  if (res.status !== 201) throw new Error(`creating project ${id} answered ${res.status}: ${await res.text()}`);
}

/**
 * The contract tests run once per store:
 * `describe.each(storeCases(pg))("%s", (_, testServer, projectServer) => …)`. `testServer` starts a
 * server of the test's own; `projectServer` gives the test a project of its own on a server the
 * file shares (see `sharedServer`).
 */
export function storeCases(pg: () => PgCluster): [string, typeof testServer, () => Promise<SharedProjectApi>][] {
  return [
    // The file store's data on tmpfs (MEMORY_TMPDIR): the contract is the API's, not the disk's fsyncs.
    [
      "--data",
      async (options = {}) => testServer({ ...options, dataDir: options.dataDir ?? (await tempDir(MEMORY_TMPDIR)) }),
      sharedServer({}),
    ],
    ["--db", (options = {}) => testServer({ ...options, pg }), sharedServer({ pg })],
  ];
}

function testPool(url: string): Pool {
  const { Pool } = requireCjs("pg") as typeof import("pg");
  const pool = new Pool({ connectionString: url, max: 1 });
  onTestFinished(() => pool.end());
  return pool;
}

/** What a test does with its project on a server: requests, uploads, commits (`project` defaults to the test's). */
function projectApi(server: () => RunningServer, auth: Record<string, string>, defaultProject: string) {
  const t = {
    /** The project the helpers below use unless told another. */
    project: defaultProject,
    get url() {
      return server().url;
    },
    createProject: (id: string) => createProject(server().url, id, auth),
    /** fetch() of a path under /api/projects/{project}. */
    request(path: string, init: RequestInit = {}, project = defaultProject): Promise<Response> {
      return fetch(`${server().url}/api/projects/${project}${path}`, {
        ...init,
        headers: { ...auth, ...(init.headers as Record<string, string> | undefined) },
      });
    },
    /** GET /files (or ?version=N), checking that it says `"api": "1.2"` with a chain hash (a v1.3 server); answered without those fields. */
    async files(
      project = defaultProject,
      version?: number,
    ): Promise<{ version: number; files: { path: string; sha256: string; size: number }[] }> {
      const res = await t.request(`/files${version === undefined ? "" : `?version=${version}`}`, {}, project);
      if (res.status !== 200) throw new Error(`GET /files answered ${res.status}`);
      const { api, chain, ...listing } = (await res.json()) as { api?: string; chain?: string };
      if (api !== "1.2" || !/^[0-9a-f]{64}$/.test(chain ?? "")) throw new Error(`GET /files answered api ${api} with chain ${chain}`);
      return listing as never;
    },
    async upload(content: string | Uint8Array, project = defaultProject): Promise<{ sha256: string; size: number }> {
      const body = typeof content === "string" ? Buffer.from(content) : content;
      const hash = sha256(body);
      const res = await t.request(`/blobs/${hash}`, { method: "PUT", body }, project);
      if (res.status !== 201 && res.status !== 200) throw new Error(`PUT blob answered ${res.status}`);
      return { sha256: hash, size: body.length };
    },
    commit(body: unknown, key: string = randomUUID(), project = defaultProject): Promise<Response> {
      return t.request(
        "/commits",
        {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: typeof body === "string" ? body : JSON.stringify(body),
        },
        project,
      );
    },
    /** Uploads `content` and commits it at `path`; returns the new version. */
    async write(path: string, content: string, project = defaultProject): Promise<number> {
      const blob = await t.upload(content, project);
      const res = await t.commit({ changes: [{ op: "put", path, ...blob }] }, randomUUID(), project);
      if (res.status !== 200) throw new Error(`commit answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { version: number }).version;
    },
  };
  return t;
}

export type ProjectApi = ReturnType<typeof projectApi>;

/**
 * A real server on 127.0.0.1, port 0, over its own temp data dir; both are cleaned up when the
 * test finishes. Requests carry the server's token, if any, unless told otherwise.
 */
export async function testServer(options: TestServerOptions = {}) {
  const { pg, projects = ["demo"], ...serverOptions } = options;
  const dataDir = options.dataDir ?? (await tempDir());
  const databaseUrl = pg ? await pg().freshSchemaUrl() : undefined;
  /** Runs one query on the test's schema (--db only), on a connection the cluster has open. */
  const query = async <R extends QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]> => {
    if (!pg || !databaseUrl) throw new Error("query() is for a server on --db");
    return (await querySchema<R>(pg(), databaseUrl, sql, params)).rows;
  };
  let pool: Pool | undefined;
  const start = (more: Partial<ServerOptions> = {}) =>
    startServer({ port: 0, host: "127.0.0.1", ...serverOptions, ...more, dataDir, databaseUrl });
  let server: RunningServer = await start();
  onTestFinished(() => server.close());

  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  for (const id of projects) await createProject(server.url, id, auth);

  return Object.assign(
    projectApi(() => server, auth, "demo"),
    {
      dataDir,
      databaseUrl,
      query,
      /**
       * A pool of one connection on the test's schema (--db only), opened at its first query and
       * ended with the test: a handle on the store of its own, as another process would have.
       */
      pool(): Pool {
        if (!databaseUrl) throw new Error("pool() is for a server on --db");
        return (pool ??= testPool(databaseUrl));
      },
      /** The hashes of every stored blob, sorted (anything else in the blob store shows up too). */
      async storedBlobs(): Promise<string[]> {
        if (databaseUrl) return (await query<{ sha256: string }>("SELECT sha256 FROM blobs ORDER BY sha256")).map((r) => r.sha256);
        // Loose blobs (PUT) and those of packs (POST /blobs), each once.
        const loose = (await listFiles(join(dataDir, "blobs")))
          .filter((file) => !/^packs[/\\][^/\\]+\.pack$/.test(file))
          .map((file) => file.replace(/[/\\]/, ""));
        return [...new Set([...loose, ...(await packedHashes(join(dataDir, "blobs", "packs")))])].sort();
      },
      /** Long polls in progress on the server. */
      waiting: () => server.waiting(),
      /** The device logins waiting for approval: what a person does on the /device page. */
      get devices() {
        return server.devices;
      },
      /** Closes and starts again over the same data, with `more` options for the new start. */
      async restart(more: Partial<ServerOptions> = {}): Promise<void> {
        await server.close();
        server = await start(more);
      },
      close: () => server.close(),
    },
  );
}

/**
 * A project of its own on the file's shared server; `waiting()` counts the long polls in progress
 * on the whole server, which is the test's own count only while the file's tests run one after
 * another and each leaves none behind.
 */
export type SharedProjectApi = ProjectApi & { waiting(): number };

/**
 * One server (default options, no token) for the calling file, started by its first user and
 * closed after the file; each call gives the test a fresh project of its own on it. For the tests
 * that look at nothing else server-wide (stored blobs, restarts, a close): a start of their own
 * costs ~50 ms of CPU on a data dir and a fresh PostgreSQL schema ~240 ms, and the contract files
 * run hundreds of tests.
 */
export function sharedServer(options: Pick<TestServerOptions, "pg">): () => Promise<SharedProjectApi> {
  let server: Promise<{ running: RunningServer; dataDir: string }> | undefined;
  let projects = 0;
  afterAll(async () => {
    const started = await server?.catch(() => undefined); // a start that failed failed its tests
    await started?.running.close();
    if (started) await rm(started.dataDir, { recursive: true, force: true });
  });
  const start = async () => {
    const dataDir = await mkdtemp(join(MEMORY_TMPDIR, "uspark-server-test-"));
    const databaseUrl = options.pg ? await options.pg().freshSchemaUrl() : undefined;
    return { running: await startServer({ port: 0, host: "127.0.0.1", dataDir, databaseUrl }), dataDir };
  };
  return async () => {
    const { running } = await (server ??= start());
    const project = `shared-${++projects}`;
    await createProject(running.url, project);
    return Object.assign(
      projectApi(() => running, {}, project),
      { waiting: () => running.waiting() },
    );
  };
}

export { eventually } from "./wait.js";
