// A throwaway PostgreSQL cluster (tests and `npm run bench`): initdb + pg_ctl as the `postgres`
// system user (the server refuses to run as root) on a free port with its socket in a temp dir.
// initdb runs once per PostgreSQL build: its data dir is kept in the temp dir and copied.
// Without the binaries this throws, loudly: install Debian's `postgresql` (.ci/run does).

import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdtemp, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const require = createRequire(import.meta.url);

function pgBin(name) {
  const onPath = (process.env.PATH ?? "")
    .split(":")
    .map((dir) => join(dir, name))
    .find((file) => existsSync(file));
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
function asPostgres(bin, args) {
  return userInfo().uid === 0 ? run("runuser", ["-u", "postgres", "--", bin, ...args]) : run(bin, args);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A temp dir the postgres user may write in (its own when we are root). */
async function postgresDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  if (userInfo().uid === 0) {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]);
    await chown(dir, Number(uid), Number(gid));
  }
  return dir;
}

const INITDB_ARGS = ["-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"];

/**
 * A never-started data dir made by initdb once per PostgreSQL build, kept in the temp dir: every
 * test file wants a cluster of its own, and a copy costs a tenth of initdb (about 1.3 s of CPU).
 * Made aside and renamed into place, so that concurrent first users never see half of one.
 */
async function templateDataDir(initdb) {
  const { stdout: version } = await run(initdb, ["--version"]);
  const key = createHash("sha256")
    .update(`${initdb} ${version} ${INITDB_ARGS.join(" ")} ${userInfo().uid}`)
    .digest("hex")
    .slice(0, 16);
  const template = join(tmpdir(), `uspark-pg-template-${key}`);
  if (existsSync(join(template, "PG_VERSION"))) return template;
  const aside = await postgresDir("uspark-pg-template-making-");
  await asPostgres(initdb, ["-D", join(aside, "data"), ...INITDB_ARGS]);
  // Another process may have put its own there meanwhile: theirs is as good.
  await rename(join(aside, "data"), template).catch((error) => {
    if (!existsSync(join(template, "PG_VERSION"))) throw error;
  });
  await rm(aside, { recursive: true, force: true });
  return template;
}

export async function startCluster() {
  const initdb = pgBin("initdb");
  const pgCtl = pgBin("pg_ctl");
  const dir = await postgresDir("uspark-pg-");
  const data = join(dir, "data");
  // cp -a keeps the owner (postgres) and the 0700 mode PostgreSQL insists on.
  await run("cp", ["-a", await templateDataDir(initdb), data]);
  const port = await freePort();
  // autovacuum off: a throwaway cluster's tables never grow old enough to need it, and its workers
  // analyze the hundreds of small tables a test run makes (~0.6 s of CPU a minute after a burst).
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c autovacuum=off`;
  const start = () => asPostgres(pgCtl, ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]).then(() => {});
  const stop = () => stopClusterIn(dir, { removeDir: false });
  await start();

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { admin, freshSchemaUrl } = schemasOn(url);
  return {
    url,
    port,
    dir,
    admin,
    start,
    stop,
    freshSchemaUrl,
    async destroy() {
      await admin.end().catch(() => {});
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Fresh schemas on the running cluster at `url` (its `postgres` database): `admin` is the pool
 * that makes them (end it when done), `freshSchemaUrl` a URL whose connections use a new, empty one.
 */
export function schemasOn(url) {
  const { Pool } = require("pg");
  const admin = new Pool({ connectionString: url, max: 2 });
  admin.on("error", () => {});
  return {
    admin,
    async freshSchemaUrl() {
      const schema = `t_${randomUUID().replaceAll("-", "")}`;
      await admin.query(`CREATE SCHEMA ${schema}`);
      return `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    },
  };
}

/**
 * Stops the cluster whose temp dir is `dir` (the `dir` of a started cluster), if it runs, and
 * removes the dir: for whoever outlives the process that started it (the test suite's teardown).
 */
export async function stopClusterIn(dir, { removeDir = true } = {}) {
  const data = join(dir, "data");
  if (existsSync(join(data, "postmaster.pid"))) await asPostgres(pgBin("pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
  if (removeDir) await rm(dir, { recursive: true, force: true });
}
