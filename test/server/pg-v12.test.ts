// What v1.2 asks of the PostgreSQL store (--db) only: long polls woken across replicas with no
// connection held, a lost notification that only delays, the schema of a v1.1 database carried
// over, and blobs that stream in and out one chunk at a time.

import { randomUUID } from "node:crypto";
import { describe, expect, it, onTestFinished } from "vitest";
import type { QueryResult, QueryResultRow } from "pg";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { chainHash, ZERO_CHAIN } from "../../src/api/chain.js";
import type { Change } from "../../src/api/types.js";
import { MIGRATIONS } from "../../src/server/pg/migrations.js";
import { PgStore } from "../../src/server/pg/store.js";
import { eventually, sha256, testServer } from "../kit/server.js";
import { querySchema, usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();
const MiB = 1024 * 1024;

async function replica(databaseUrl: string): Promise<RunningServer> {
  const server = await startServer({ databaseUrl, port: 0 });
  onTestFinished(() => server.close());
  return server;
}

interface Schema {
  query<R extends QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/** Queries on the schema of `databaseUrl` from outside the store, on connections the cluster has open. */
function onSchema(databaseUrl: string): Schema {
  return { query: (sql, params) => querySchema(pg(), databaseUrl, sql, params) };
}

async function feed(url: string, query: string): Promise<{ version: number; commits: { version: number }[] }> {
  const res = await fetch(`${url}/api/projects/demo/commits${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

describe("long polls across replicas", () => {
  it("wakes a waiter on replica B with a commit on replica A, holding no connection while it waits", async () => {
    const a = await testServer({ pg });
    const b = await replica(a.databaseUrl!);
    // More waiters than B's pool has connections: were each to hold one, B could serve nothing else.
    const waits = Array.from({ length: 15 }, () => feed(b.url, "?wait=60000"));
    await eventually(async () => b.waiting() === 15);
    const listing = await fetch(`${b.url}/api/projects/demo/files`);
    expect(listing.status).toBe(200);
    await a.write("a.txt", "from A");
    for (const answered of await Promise.all(waits))
      expect(answered).toMatchObject({ version: 1, commits: [expect.objectContaining({ version: 1 })] });
    expect(b.waiting()).toBe(0);
  });

  it("lets a lost notification only delay a waiter: a commit that sent none is seen by the re-read of the heads", async () => {
    const t = await testServer({ pg });
    const waiting = feed(t.url, "?wait=60000");
    await eventually(async () => t.waiting() === 1);
    // A commit as the store writes it, without its NOTIFY.
    const db = onSchema(t.databaseUrl!);
    await db.query("INSERT INTO commits (project, version, key, changes) VALUES ('demo', 1, $1, '[]')", [randomUUID()]);
    await db.query("UPDATE projects SET version = 1 WHERE id = 'demo'");
    expect((await waiting).commits.map((c) => c.version)).toEqual([1]);
  });

  it("listens again after its listening connection is killed", async () => {
    const listeners = async () =>
      (await pg().admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN uspark_commits'")).rows.map(
        (row) => row.pid,
      );
    // The worker's cluster outlives other files' servers: a listener there before A and B is not theirs.
    const others = await listeners();
    const ours = async () => (await listeners()).filter((pid) => !others.includes(pid));
    const a = await testServer({ pg });
    const b = await replica(a.databaseUrl!);
    await eventually(async () => (await ours()).length === 2);
    const killed = await ours();
    await pg().admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [killed]);
    await eventually(async () => {
      const now = await ours();
      return now.length === 2 && now.every((pid) => !killed.includes(pid));
    });
    const waiting = feed(b.url, "?wait=60000");
    await eventually(async () => b.waiting() === 1);
    await a.write("a.txt", "after the reconnection");
    expect((await waiting).commits.map((c) => c.version)).toEqual([1]);
  });

  it("lets exactly one of concurrent commits on two replicas, each expecting the same path absent, through", async () => {
    const a = await testServer({ pg });
    const b = await replica(a.databaseUrl!);
    const blobs = await Promise.all(Array.from({ length: 10 }, (_, i) => a.upload(`writer ${i}`)));
    const answers = await Promise.all(
      blobs.map((blob, i) =>
        fetch(`${(i % 2 ? a : b).url}/api/projects/demo/commits`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
          body: JSON.stringify({ changes: [{ op: "put", path: "claimed.txt", ...blob, expect: null }] }),
        }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, ...Array<number>(9).fill(409)]);
    expect((await a.files()).version).toBe(1);
  });
});

describe("a database of an older version", () => {
  it("keeps its projects, files, commits and transcripts, and rebuilds every path's history from its commits", async () => {
    const url = await pg().freshSchemaUrl();
    const db = onSchema(url);
    await db.query(MIGRATIONS[0]!);
    await db.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    await db.query("INSERT INTO schema_migrations (version) VALUES (1)");
    const [one, two] = [
      { sha256: sha256("one"), size: 3 },
      { sha256: sha256("two"), size: 3 },
    ];
    await db.query("INSERT INTO blobs (sha256, size) VALUES ($1, 3), ($2, 3)", [one.sha256, two.sha256]);
    await db.query("INSERT INTO blob_chunks (sha256, seq, data) VALUES ($1, 0, 'one'), ($2, 0, 'two')", [one.sha256, two.sha256]);
    const commits = [
      [
        { op: "put", path: "a", ...one },
        { op: "put", path: "b", ...one },
        { op: "put", path: "a", ...two },
      ],
      [
        { op: "delete", path: "b" },
        { op: "put", path: "c", ...one },
      ],
      [
        { op: "put", path: "b", ...two },
        { op: "delete", path: "a" },
        { op: "put", path: "a", ...one },
      ],
    ];
    await db.query("INSERT INTO projects (id, version) VALUES ('old', 3)");
    for (const [i, changes] of commits.entries()) {
      await db.query("INSERT INTO commits (project, version, key, at, changes) VALUES ('old', $1, $2, $3, $4)", [
        i + 1,
        `k${i + 1}`,
        `2024-01-0${i + 1}T00:00:00Z`,
        JSON.stringify(changes),
      ]);
    }
    await db.query("INSERT INTO files (project, path, sha256, size) VALUES ('old', 'a', $1, 3), ('old', 'b', $2, 3), ('old', 'c', $1, 3)", [
      one.sha256,
      two.sha256,
    ]);
    await db.query("INSERT INTO transcripts (project, session, length) VALUES ('talk-only', 's-1', 3)");
    await db.query("INSERT INTO transcript_chunks (project, session, start, data) VALUES ('talk-only', 's-1', 0, 'abc')");

    const server = await replica(url);
    const api = `${server.url}/api/projects`;
    expect(await (await fetch(api)).json()).toEqual({
      projects: [
        { id: "old", version: 3, files: 3, updated: "2024-01-03T00:00:00.000Z" },
        { id: "talk-only", version: 0, files: 0, updated: expect.any(String) },
      ],
    });
    const at = async (version: number) => ((await (await fetch(`${api}/old/files?version=${version}`)).json()) as { files: unknown }).files;
    expect(await at(1)).toEqual([
      { path: "a", ...two },
      { path: "b", ...one },
    ]);
    expect(await at(2)).toEqual([
      { path: "a", ...two },
      { path: "c", ...one },
    ]);
    expect(await at(3)).toEqual([
      { path: "a", ...one },
      { path: "b", ...two },
      { path: "c", ...one },
    ]);
    // Commits from before the chain hash (API v1.3) get theirs at the migration, each after the one before.
    const chains = (commits as Change[][]).reduce((acc, changes) => [...acc, chainHash(acc.at(-1)!, changes)], [ZERO_CHAIN]);
    expect(await (await fetch(`${api}/old/files`)).json()).toEqual({ version: 3, files: await at(3), api: "1.2", chain: chains[3] });
    const feed = (await (await fetch(`${api}/old/commits`)).json()) as { chain: string; commits: { chain: string }[] };
    expect([feed.chain, ...feed.commits.map((c) => c.chain)]).toEqual([chains[3], ...chains.slice(1)]);
    expect(await (await fetch(`${api}/talk-only/sessions/s-1/events`)).text()).toBe("abc");
    // The blobs its commits name stay visible to it (migration 5), to no other project.
    for (const blob of [one, two]) {
      expect((await fetch(`${api}/old/blobs/${blob.sha256}`, { method: "HEAD" })).status).toBe(200);
      expect((await fetch(`${api}/talk-only/blobs/${blob.sha256}`, { method: "HEAD" })).status).toBe(404);
    }
    const replay = await fetch(`${api}/old/commits`, {
      method: "POST",
      headers: { "idempotency-key": "k2" },
      body: JSON.stringify({ changes: commits[1] }),
    });
    expect(await replay.json()).toEqual({ version: 2, chain: chains[2], api: "1.2" });
    const next = await fetch(`${api}/old/commits`, {
      method: "POST",
      headers: { "idempotency-key": "k4" },
      body: JSON.stringify({ changes: [{ op: "delete", path: "c", expect: one.sha256 }] }),
    });
    expect(await next.json()).toMatchObject({ version: 4, chain: chainHash(chains[3]!, [{ op: "delete", path: "c" }]) });
    expect(await at(3)).toHaveLength(3);
    expect(await at(4)).toEqual([
      { path: "a", ...one },
      { path: "b", ...two },
    ]);
  });
});

describe("blobs in PostgreSQL, one chunk at a time", () => {
  async function store(): Promise<{ store: PgStore; db: Schema }> {
    const url = await pg().freshSchemaUrl();
    const opened = await PgStore.open(url);
    onTestFinished(() => opened.close());
    await opened.createProject("p"); // a blob is stored for a project that holds it
    return { store: opened, db: onSchema(url) };
  }

  const staged = async (db: Schema) => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM blob_uploads")).rows[0]!.n);

  it("stores each full chunk of an upload while the rest of the body is still to come", async () => {
    const { store: s, db } = await store();
    const bytes = Buffer.alloc(2.5 * MiB, 7);
    const seenWhileStreaming: number[] = [];
    const result = await s.putBlob("p", sha256(bytes), async (write) => {
      for (let at = 0; at < bytes.length; at += 256 * 1024) {
        await write(bytes.subarray(at, at + 256 * 1024));
        seenWhileStreaming.push(await staged(db));
      }
    });
    expect(result).toBe("created");
    // 1 MiB rows appear as the body arrives, not at its end.
    expect(seenWhileStreaming.slice(3, 5)).toEqual([1, 1]);
    expect(seenWhileStreaming.at(-1)).toBe(2);
    expect(await staged(db)).toBe(0);
    const blob = (await s.readBlob("p", sha256(bytes)))!;
    const chunks: Uint8Array[] = [];
    for await (const chunk of blob.chunks()) chunks.push(chunk);
    expect(chunks.map((c) => c.length)).toEqual([MiB, MiB, MiB / 2]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it("keeps nothing, staged or stored, of an upload whose body fails", async () => {
    const { store: s, db } = await store();
    const failing = s.putBlob("p", sha256("never whole"), async (write) => {
      await write(Buffer.alloc(1.5 * MiB));
      throw new Error("client went away");
    });
    await expect(failing).rejects.toThrow("client went away");
    expect(await staged(db)).toBe(0);
    expect(await s.blobSizes("p", [sha256("never whole")])).toEqual(new Map());
  });

  it("reads a blob's chunks only as they are consumed", async () => {
    const { store: s, db } = await store();
    const bytes = Buffer.alloc(3 * MiB, 1);
    await s.putBlob("p", sha256(bytes), async (write) => write(bytes));
    const chunks = (await s.readBlob("p", sha256(bytes)))!.chunks()[Symbol.asyncIterator]();
    expect((await chunks.next()).value).toHaveLength(MiB);
    // Gone after the first chunk was read: a reader that had fetched them all would not notice.
    await db.query("DELETE FROM blob_chunks WHERE sha256 = $1 AND seq > 0", [sha256(bytes)]);
    await expect(chunks.next()).rejects.toThrow(/cut short/);
  });

  it("serves a blob of several chunks whole, one by one and in a batch", async () => {
    const t = await testServer({ pg });
    const bytes = Buffer.from(Array.from({ length: 2 * MiB + 5 }, (_, i) => (i * 13) % 251));
    await t.upload(bytes);
    expect(Buffer.from(await (await t.request(`/blobs/${sha256(bytes)}`)).arrayBuffer()).equals(bytes)).toBe(true);
    const res = await t.request("/blobs/get", {
      method: "POST",
      body: JSON.stringify({ sha256: [sha256(bytes), (await t.upload("small")).sha256] }),
    });
    const form = await res.formData();
    expect(Buffer.from(await (form.get(sha256(bytes)) as Blob).arrayBuffer()).equals(bytes)).toBe(true);
    expect(await (form.get(sha256("small")) as Blob).text()).toBe("small");
  });
});
