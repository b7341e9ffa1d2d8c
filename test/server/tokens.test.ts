// Scoped tokens on both stores (docs/access.md#tokens-and-scopes): their projects and scope, revoked or expired
// tokens refused at the very next request (revoked by another process), no secret kept.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createToken, openCredentials, startServer, type TokenRecord } from "../../src/server/index.js";
import { PgCredentials } from "../../src/server/pg/credentials.js";
import type { TokenSpec } from "../../src/server/tokens.js";
import { runCli } from "../kit/cli.js";
import { listFiles, sha256, storeCases, type TestServer } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();
const ADMIN = "admin-token-for-tests";

/**
 * Makes a token as `uspark serve token create` would, through its own handle on the store: the
 * server hears of it from the store only. On --db, the test's pool on the schema the server has
 * migrated: opening a store of its own (openCredentials, tested by the replicas below) would cost
 * two more connections and the migrations' checks each time.
 */
async function mint(t: TestServer, spec: TokenSpec): Promise<{ secret: string; record: TokenRecord }> {
  if (t.databaseUrl) return createToken(new PgCredentials(t.pool(), () => {}), spec, Date.now());
  const opened = await openCredentials({ dataDir: t.dataDir });
  try {
    return await createToken(opened.credentials, spec, Date.now());
  } finally {
    await opened.close();
  }
}

/** The store flags of the CLI for the store `t` serves. */
function storeArgs(t: TestServer): string[] {
  return t.databaseUrl ? ["--db", t.databaseUrl] : ["--data", t.dataDir];
}

function as(secret: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${secret}` } };
}

describe.each(storeCases(pg))("scoped tokens on %s", (_name, testServer) => {
  it("a write token reads and writes its projects only, sees only them listed, and cannot create projects", async () => {
    const t = await testServer({ token: ADMIN, projects: ["demo", "other"] });
    const blob = await t.upload("hello");
    const { secret } = await mint(t, { projects: ["demo"], access: "write" });
    const commit = (project: string) =>
      fetch(
        `${t.url}/api/projects/${project}/commits`,
        as(secret, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
          body: JSON.stringify({ changes: [{ op: "put", path: "a.txt", ...blob }] }),
        }),
      );
    expect((await commit("demo")).status).toBe(200);
    expect((await fetch(`${t.url}/api/projects/demo/files`, as(secret))).status).toBe(200);
    expect((await commit("other")).status).toBe(403);
    const other = await fetch(`${t.url}/api/projects/other/files`, as(secret));
    expect(other.status).toBe(403);
    expect(((await other.json()) as { message: string }).message).toBe('this token has no access to project "other"');
    // Outside its scope, a project that does not exist is not told apart from one that does.
    expect((await fetch(`${t.url}/api/projects/nowhere/files`, as(secret))).status).toBe(403);
    const listed = (await (await fetch(`${t.url}/api/projects`, as(secret))).json()) as { projects: { id: string }[] };
    expect(listed.projects.map((p) => p.id)).toEqual(["demo"]);
    const create = await fetch(`${t.url}/api/projects`, as(secret, { method: "POST", body: JSON.stringify({ id: "mine" }) }));
    expect(create.status).toBe(403);
  });

  it("a read token may GET, HEAD and POST /blobs/get, and is refused every write with 403", async () => {
    const t = await testServer({ token: ADMIN });
    const blob = await t.upload("content");
    await t.write("a.txt", "content");
    const { secret } = await mint(t, { projects: ["demo"], access: "read" });
    const api = (path: string, init: RequestInit = {}) => fetch(`${t.url}/api/projects/demo${path}`, as(secret, init));
    expect((await api("/files")).status).toBe(200);
    expect((await api("/commits")).status).toBe(200);
    expect((await api(`/blobs/${blob.sha256}`)).status).toBe(200);
    expect((await api(`/blobs/${blob.sha256}`, { method: "HEAD" })).status).toBe(200);
    expect((await api("/blobs/get", { method: "POST", body: JSON.stringify({ sha256: [blob.sha256] }) })).status).toBe(200);

    const fresh = "never stored";
    expect((await api(`/blobs/${sha256(fresh)}`, { method: "PUT", body: fresh })).status).toBe(403);
    const change = { changes: [{ op: "delete", path: "a.txt" }] };
    const json = { "content-type": "application/json", "idempotency-key": crypto.randomUUID() };
    const refused = await api("/commits", { method: "POST", headers: json, body: JSON.stringify(change) });
    expect(refused.status).toBe(403);
    // Said as what it is: the token may read this project, not write it.
    expect(((await refused.json()) as { message: string }).message).toBe(
      'this token may only read project "demo": writing needs a write token',
    );
    expect((await api("/sessions/s1/events?offset=0", { method: "PUT", body: "{}\n" })).status).toBe(403);
    expect((await api("/blobs", { method: "POST", body: "x" })).status).toBe(403);
    expect((await t.files()).files.map((f) => f.path)).toEqual(["a.txt"]);
    expect((await t.request(`/blobs/${sha256(fresh)}`, { method: "HEAD" })).status).toBe(404);
  });

  it("refuses a token revoked by another process (uspark serve token revoke) at the very next request", async () => {
    const t = await testServer({ token: ADMIN });
    const { secret, record } = await mint(t, { projects: ["demo"], access: "write" });
    expect((await fetch(`${t.url}/api/projects/demo/files`, as(secret))).status).toBe(200);
    const revoked = await runCli(["serve", "token", "revoke", record.id, ...storeArgs(t)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const res = await fetch(`${t.url}/api/projects/demo/files`, as(secret));
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain(secret);
  });

  it("refuses an expired token, and counts a token with time left", async () => {
    const t = await testServer({ token: ADMIN });
    const expired = await mint(t, { projects: ["demo"], access: "read", expires: Date.now() - 1 });
    const live = await mint(t, { projects: ["demo"], access: "read", expires: Date.now() + 60_000 });
    expect((await fetch(`${t.url}/api/projects/demo/files`, as(expired.secret))).status).toBe(401);
    expect((await fetch(`${t.url}/api/projects/demo/files`, as(live.secret))).status).toBe(200);
  });

  it("on a server without an admin token, a known scoped token keeps its scope; a revoked one is refused; any other is the admin", async () => {
    const t = await testServer();
    const { secret, record } = await mint(t, { projects: ["demo"], access: "read" });
    const put = (token: string) => fetch(`${t.url}/api/projects/demo/blobs/${sha256("x")}`, as(token, { method: "PUT", body: "x" }));
    expect((await put(secret)).status).toBe(403);
    expect((await put("anything-else")).status).toBe(201);
    expect((await fetch(`${t.url}/api/projects`, { method: "POST", body: JSON.stringify({ id: "p2" }) })).status).toBe(201);
    await runCli(["serve", "token", "revoke", record.id, ...storeArgs(t)]);
    expect((await fetch(`${t.url}/api/projects/demo/files`, as(secret))).status).toBe(401);
  });

  it("keeps no secret in the store: only its SHA-256", async () => {
    const t = await testServer({ token: ADMIN });
    const { secret, record } = await mint(t, { projects: ["demo"], access: "write" });
    expect(record.sha256).toBe(sha256(secret));
    expect(await storedText(t)).not.toContain(secret);
    expect(await storedText(t)).toContain(record.sha256);
  });
});

describe("PostgreSQL replicas", () => {
  it("a token made and revoked through one replica's store is honoured, then refused, by every replica", async () => {
    const databaseUrl = await pg().freshSchemaUrl();
    const servers = [await startServer({ databaseUrl, port: 0, token: ADMIN }), await startServer({ databaseUrl, port: 0, token: ADMIN })];
    try {
      await fetch(`${servers[0]!.url}/api/projects`, as(ADMIN, { method: "POST", body: JSON.stringify({ id: "demo" }) }));
      const opened = await openCredentials({ databaseUrl });
      const { secret, record } = await createToken(opened.credentials, { projects: ["demo"], access: "read" }, Date.now());
      for (const server of servers) expect((await fetch(`${server.url}/api/projects/demo/files`, as(secret))).status).toBe(200);
      await opened.credentials.revokeToken(record.id, Date.now());
      await opened.close();
      for (const server of servers) expect((await fetch(`${server.url}/api/projects/demo/files`, as(secret))).status).toBe(401);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});

/** Everything the store holds about tokens, as text. */
async function storedText(t: TestServer): Promise<string> {
  if (!t.databaseUrl) {
    const files = await listFiles(t.dataDir);
    return files.map((file) => `${file}\n${readFileSync(`${t.dataDir}/${file}`, "latin1")}`).join("\n");
  }
  const rows = await t.query<{ row: string }>("SELECT row_to_json(t)::text AS row FROM tokens t");
  return rows.map((row) => row.row).join("\n");
}
