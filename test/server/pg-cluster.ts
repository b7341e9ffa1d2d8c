// A throwaway PostgreSQL cluster for tests: initdb + pg_ctl as the `postgres` system user (the
// server refuses to run as root) on a free port with its socket in a temp dir. No binaries: the
// tests fail, loudly (CI installs Debian's `postgresql`).

import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import type { Pool } from "pg";
import { requireCjs } from "../../src/cjs.js";

const run = promisify(execFile);

export interface PgCluster {
  /** postgres://… of the cluster's `postgres` database. */
  url: string;
  port: number;
  /** A URL whose connections use a fresh, empty schema: one isolated store per call. */
  freshSchemaUrl(): Promise<string>;
  /** A pool on the cluster, closed at teardown. */
  admin: Pool;
  /** Stops the server fast (like a crash) or starts it again, on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

function pgBin(name: string): string {
  const onPath = (process.env.PATH ?? "").split(":").map((dir) => join(dir, name)).find((file) => existsSync(file));
  if (onPath) return onPath;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const file = join(root, version, "bin", name);
    if (existsSync(file)) return file;
  }
  throw new Error(
    `PostgreSQL's ${name} was not found (PATH or /usr/lib/postgresql/*/bin): install it with ` +
      "`apt-get update && apt-get install -y postgresql` (as .ci/run does)",
  );
}

/** Runs a PostgreSQL binary as the postgres user when we are root. */
function asPostgres(bin: string, args: string[]): Promise<unknown> {
  const asRoot = userInfo().uid === 0;
  return asRoot ? run("runuser", ["-u", "postgres", "--", bin, ...args]) : run(bin, args);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startCluster(): Promise<PgCluster & { destroy(): Promise<void> }> {
  const initdb = pgBin("initdb");
  const pgCtl = pgBin("pg_ctl");
  const dir = await mkdtemp(join(tmpdir(), "uspark-pg-"));
  await chmod(dir, 0o755);
  if (userInfo().uid === 0) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout), Number(gid));
  }
  const data = join(dir, "data");
  await asPostgres(initdb, ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => asPostgres(pgCtl, ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]).then(() => {});
  const stop = () => asPostgres(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]).then(() => {});
  await start();

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { Pool } = requireCjs("pg") as typeof import("pg");
  const admin = new Pool({ connectionString: url, max: 2 });
  admin.on("error", () => {});
  return {
    url,
    port,
    admin,
    start,
    stop,
    async freshSchemaUrl() {
      const schema = `t_${randomUUID().replaceAll("-", "")}`;
      await admin.query(`CREATE SCHEMA ${schema}`);
      return `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    },
    async destroy() {
      await admin.end().catch(() => {});
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One cluster for the calling test file, started before its tests and removed after. */
export function usePgCluster(): () => PgCluster {
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(() => cluster?.destroy(), 30_000);
  return () => {
    if (!cluster) throw new Error("the PostgreSQL cluster is not started (call usePgCluster() at the top of the file)");
    return cluster;
  };
}
