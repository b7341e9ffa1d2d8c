// What only the PostgreSQL store (--db) promises: replicas on one database, a database that
// comes and goes, migrations run by several replicas at once.

import { randomUUID } from "node:crypto";
import { describe, expect, it, onTestFinished } from "vitest";
import { requireCjs } from "../../src/util/cjs.js";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { MIGRATIONS } from "../../src/server/pg/migrations.js";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { createProject, eventually, sha256, testServer } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";
import { ZERO_CHAIN } from "../../src/api/chain.js";

const pg = usePgCluster();

async function replica(databaseUrl: string): Promise<RunningServer> {
  const server = await startServer({ databaseUrl, port: 0 });
  onTestFinished(() => server.close());
  return server;
}

async function upload(url: string, content: string): Promise<{ sha256: string; size: number }> {
  const res = await fetch(`${url}/api/projects/demo/blobs/${sha256(content)}`, { method: "PUT", body: content });
  expect([200, 201]).toContain(res.status);
  return { sha256: sha256(content), size: Buffer.byteLength(content) };
}

function commit(url: string, path: string, blob: { sha256: string; size: number }, key = randomUUID()): Promise<Response> {
  return fetch(`${url}/api/projects/demo/commits`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ changes: [{ op: "put", path, ...blob }] }),
  });
}

/** Holds the row lock of project "demo" from another connection, so that commits to it wait. */
async function holdProjectLock(databaseUrl: string) {
  const { Pool } = requireCjs("pg") as typeof import("pg");
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  pool.on("error", () => {});
  const holder = await pool.connect();
  holder.on("error", () => {});
  await holder.query("BEGIN");
  await holder.query("SELECT * FROM projects WHERE id = 'demo' FOR UPDATE");
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await holder.query("ROLLBACK").catch(() => {});
    holder.release(true);
    await pool.end().catch(() => {});
  };
  onTestFinished(release);
  return {
    release,
    /** Resolves once another session waits for a lock. */
    someoneWaits: () =>
      eventually(async () => {
        const { rows } = await pg().admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
        );
        return rows[0]!.n > 0;
      }),
  };
}

describe("several replicas on one database", () => {
  it("serializes concurrent commits to one project: versions 1..N, no gap, no duplicate", async () => {
    const url = await pg().freshSchemaUrl();
    const [a, b] = [await replica(url), await replica(url)];
    await createProject(a.url, "demo");
    const blob = await upload(a.url, "shared");
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => commit((i % 2 ? a : b).url, `f${i}.txt`, blob)));
    const versions = await Promise.all(answers.map(async (res) => ((await res.json()) as { version: number }).version));
    expect(versions.sort((x, y) => x - y)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    const files = (await (await fetch(`${b.url}/api/projects/demo/files`)).json()) as { version: number; files: unknown[] };
    expect(files.version).toBe(24);
    expect(files.files).toHaveLength(24);
  });

  it("answers an Idempotency-Key retried on the other replica with the first answer, applying it once", async () => {
    const t = await testServer({ pg });
    const other = await replica(t.databaseUrl!);
    const blob = await t.upload("once");
    const key = randomUUID();
    const answers = await Promise.all([commit(t.url, "a.txt", blob, key), commit(other.url, "a.txt", blob, key)]);
    expect(await Promise.all(answers.map((res) => res.json()))).toMatchObject([{ version: 1 }, { version: 1 }]);
    expect(await (await commit(other.url, "a.txt", blob, key)).json()).toMatchObject({ version: 1 });
    expect((await t.files()).version).toBe(1);
  });

  it("applies each migration once when replicas start together", async () => {
    const url = await pg().freshSchemaUrl();
    const servers = await Promise.all([replica(url), replica(url), replica(url)]);
    for (const server of servers) expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const schema = decodeURIComponent(new URL(url).searchParams.get("options")!).split("=")[1];
    const { rows } = await pg().admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    expect(rows).toEqual(MIGRATIONS.map((_, i) => ({ version: i + 1 })));
  });
});

describe("a server that cannot listen", () => {
  it("closes its database connections when the port is taken", async () => {
    const first = await replica(await pg().freshSchemaUrl());
    const name = `listen-fails-${randomUUID()}`;
    const url = `${await pg().freshSchemaUrl()}&application_name=${name}`;
    await expect(startServer({ databaseUrl: url, port: first.port })).rejects.toMatchObject({ code: "EADDRINUSE" });
    const connections = async () => {
      const { rows } = await pg().admin.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
        [name],
      );
      return rows[0]!.n;
    };
    await eventually(async () => (await connections()) === 0, 5_000);
  });
});

describe("a database that goes away", () => {
  it("answers 503 with Retry-After while the database is down, then serves again; /healthz stays up", async () => {
    const t = await testServer({ pg });
    const blob = await t.upload("before");
    await pg().stop();
    try {
      const key = randomUUID();
      const down = await commit(t.url, "a.txt", blob, key);
      expect(down.status).toBe(503);
      expect(down.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await down.json()).toMatchObject({ error: "unavailable" });
      expect((await fetch(`${t.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    } finally {
      await pg().start();
    }
    await eventually(async () => (await commit(t.url, "a.txt", blob)).status === 200);
    expect((await t.files()).files.map((f) => f.path)).toEqual(["a.txt"]);
  });

  it("answers 503, without crashing, when the database goes away in the middle of a commit", async () => {
    const t = await testServer({ pg });
    const blob = await t.upload("blocked");
    await t.write("first.txt", "first");
    const lock = await holdProjectLock(t.databaseUrl!);
    const key = randomUUID();
    const waiting = commit(t.url, "blocked.txt", blob, key);
    await lock.someoneWaits();
    await pg().stop();
    try {
      const res = await waiting;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).not.toBeNull();
    } finally {
      await lock.release();
      await pg().start();
    }
    await eventually(async () => (await commit(t.url, "blocked.txt", blob, key)).status === 200);
    expect((await t.files()).version).toBe(2);
  });

  it("starts while the database is down, answers 503, and migrates once it is back", async () => {
    const url = await pg().freshSchemaUrl();
    await pg().stop();
    let server: RunningServer;
    const warnings: string[] = [];
    try {
      server = await startServer({ databaseUrl: url, port: 0, onWarning: (w) => warnings.push(w) });
      onTestFinished(() => server.close());
      const res = await fetch(`${server.url}/api/projects/demo/files`);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).not.toBeNull();
    } finally {
      await pg().start();
    }
    expect(warnings.join("\n")).toMatch(/database unreachable/);
    await eventually(async () => (await fetch(`${server!.url}/readyz`)).status === 200);
    await createProject(server!.url, "demo");
    expect(await (await fetch(`${server!.url}/api/projects/demo/files`)).json()).toEqual({
      version: 0,
      files: [],
      api: "1.2",
      chain: ZERO_CHAIN,
    });
  });
});

describe("uspark serve --db", () => {
  it("prints the URL it listens on without the database password, and stops on SIGTERM with 0", async () => {
    const dbUrl = new URL(await pg().freshSchemaUrl());
    dbUrl.password = "s3cret-pw";
    const { child, result } = await startCli(["serve", "--db", dbUrl.toString(), "--port", "0"]);
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    const text = await waitForOutput(child.stderr, (seen) => /listening on http:\/\/127\.0\.0\.1:\d+/.test(seen), 20_000);
    const url = /listening on (http:\/\/\S+)/.exec(text)![1]!;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    child.kill("SIGTERM");
    const { code, stderr } = await result;
    expect(code).toBe(0);
    expect(stderr).not.toContain("s3cret-pw");
    expect(stderr).toContain("***");
  });

  it("on SIGTERM finishes the commit in flight, then exits 0", async () => {
    const t = await testServer({ pg });
    const blob = await t.upload("in flight");
    await t.write("first.txt", "first");
    await t.close();
    const { child, result } = await startCli(["serve", "--db", t.databaseUrl!, "--port", "0"]);
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    const text = await waitForOutput(child.stderr, (seen) => /listening on http:\/\/\S+/.test(seen), 20_000);
    const url = /listening on (http:\/\/\S+)/.exec(text)![1]!;
    const lock = await holdProjectLock(t.databaseUrl!);
    const inFlight = commit(url, "late.txt", blob);
    await lock.someoneWaits();
    child.kill("SIGTERM");
    await waitForOutput(child.stderr, (seen) => seen.includes("SIGTERM received"), 10_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow(); // no longer accepting
    await lock.release();
    const res = await inFlight;
    expect(await res.json()).toMatchObject({ version: 2 });
    expect((await result).code).toBe(0);
  });

  it("takes the database URL from USPARK_DATABASE_URL", async () => {
    const { child, result } = await startCli(["serve", "--port", "0"], { env: { USPARK_DATABASE_URL: await pg().freshSchemaUrl() } });
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    await waitForOutput(child.stderr, (seen) => seen.includes("listening on"), 20_000);
    child.kill("SIGTERM");
    expect((await result).code).toBe(0);
  });

  it.each([
    ["a URL that is not postgres://", ["--db", "mysql://u:hunter2@host/db"]],
    ["both --data and --db", ["--db", "postgres://127.0.0.1/x", "--data", "/tmp/x"]],
  ])("refuses %s in one line with exit 2, printing no password", async (_name, args) => {
    const { code, stderr } = await runCli(["serve", "--port", "0", ...args], { env: { USPARK_DATABASE_URL: "" } });
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).not.toContain("hunter2");
  });
});
