// The defects of docs/api.md's access rules found by trying them as an attacker would, each over
// real HTTP on a real server: blobs found across projects, device tokens outliving their approver,
// long polls checked once, a transcript path built from a web parameter, a deny by anyone.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashOfSecret } from "../../src/server/tokens.js";
import { runCli } from "../kit/cli.js";
import { eventually, storeCases, type TestServer } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";
import { mintToken, revokeToken, WebClient } from "./web/web-client.js";

const pg = usePgCluster();
const ADMIN = "admin-token-for-door-tests";
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";

function as(secret: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${secret}` } };
}

function commitBody(path: string, blob: { sha256: string; size: number }): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
    body: JSON.stringify({ changes: [{ op: "put", path, ...blob }] }),
  };
}

/** A login started by a device, as `uspark login` starts it. */
async function deviceCode(url: string): Promise<{ device_code: string; user_code: string }> {
  const res = await fetch(`${url}/api/device/code`, { method: "POST", body: new URLSearchParams({ client_id: "uspark" }) });
  return (await res.json()) as { device_code: string; user_code: string };
}

async function pollToken(url: string, deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/api/device/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: GRANT, device_code: deviceCode }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Approves `userCode` on the /device page signed in with `token`: the new token's secret. */
async function approveAsDevice(t: TestServer, token: string, projects: string[], access: "read" | "write"): Promise<string> {
  const web = new WebClient(t.url);
  await web.signIn(token);
  const code = await deviceCode(t.url);
  const answer = await web.post("/device", { user_code: code.user_code, project: projects, access, action: "approve" });
  expect(answer.status, answer.text).toBe(200);
  const granted = await pollToken(t.url, code.device_code);
  expect(granted.status).toBe(200);
  return granted.body.access_token as string;
}

describe.each(storeCases(pg))("one door on %s", (_name, testServer) => {
  const server = () => testServer({ token: ADMIN, projects: ["public", "secret"] });

  it("1. a blob is seen by a project only once uploaded to it or named by its versions: HEAD, GET, POST /blobs/get and commits", async () => {
    const t = await server();
    const pin = "PIN=417\n";
    const blob = await t.upload(pin, "secret");
    expect((await t.commit({ changes: [{ op: "put", path: ".env", ...blob }] }, randomUUID(), "secret")).status).toBe(200);
    const reader = await mintToken(t, { projects: ["public"], access: "read" });
    const writer = await mintToken(t, { projects: ["public"], access: "write" });
    const inPublic = `${t.url}/api/projects/public`;
    expect((await fetch(`${inPublic}/blobs/${blob.sha256}`, as(reader.secret, { method: "HEAD" }))).status).toBe(404);
    expect((await fetch(`${inPublic}/blobs/${blob.sha256}`, as(reader.secret))).status).toBe(404);
    const batch = await fetch(
      `${inPublic}/blobs/get`,
      as(reader.secret, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sha256: [blob.sha256] }),
      }),
    );
    expect(batch.status).toBe(404);
    const commit = await fetch(`${inPublic}/commits`, as(writer.secret, commitBody("stolen.env", blob)));
    expect(commit.status).toBe(422);
    expect(await commit.json()).toMatchObject({ error: "missing_blobs", missing: [blob.sha256] });
    // An upload tells nothing either: to the project it is new (201), whoever else holds it.
    const put = await fetch(`${inPublic}/blobs/${blob.sha256}`, as(writer.secret, { method: "PUT", body: pin }));
    expect(put.status).toBe(201);
    expect((await fetch(`${inPublic}/blobs/${blob.sha256}`, as(reader.secret))).status).toBe(200);
    expect((await fetch(`${inPublic}/commits`, as(writer.secret, commitBody("mine.env", blob)))).status).toBe(200);
    // Stored once all the same.
    expect((await t.storedBlobs()).filter((hash) => hash === blob.sha256)).toHaveLength(1);
  });

  it("1. a project's blobs stay visible to it after a restart (uploaded and never committed, or named by a version)", async () => {
    const t = await server();
    const committed = await t.upload("committed", "public");
    expect((await t.commit({ changes: [{ op: "put", path: "a", ...committed }] }, randomUUID(), "public")).status).toBe(200);
    const uploaded = await t.upload("uploaded only", "public");
    await t.restart();
    for (const blob of [committed, uploaded]) {
      expect((await t.request(`/blobs/${blob.sha256}`, { method: "HEAD" }, "public")).status).toBe(200);
      expect((await t.request(`/blobs/${blob.sha256}`, { method: "HEAD" }, "secret")).status).toBe(404);
    }
  });

  it("2. a device token is a child of its approver: within its scope, revoked with it, listed with it", async () => {
    const t = await server();
    const parent = await mintToken(t, { projects: ["public"], access: "read", expires: Date.now() + 3_600_000 });
    const child = await approveAsDevice(t, parent.secret, ["public"], "read");
    expect((await fetch(`${t.url}/api/projects/public/files`, as(child))).status).toBe(200);
    const listed = await runCli(["serve", "token", "list", "--json", ...(t.databaseUrl ? ["--db", t.databaseUrl] : ["--data", t.dataDir])]);
    const { tokens } = JSON.parse(listed.stdout.toString()) as { tokens: { id: string; parent?: string; expires?: string }[] };
    const made = tokens.find((token) => token.id !== parent.id)!;
    expect(made.parent).toBe(parent.id);
    expect(Date.parse(made.expires!)).toBeLessThanOrEqual(Date.now() + 3_600_000);
    await revokeToken(t, parent.id);
    expect((await fetch(`${t.url}/api/projects/public/files`, as(child))).status).toBe(401);
    // A revoked token approves nothing, however it reaches the device flow.
    const code = await deviceCode(t.url);
    const stale = {
      kind: "scoped",
      tokenId: parent.id,
      tokenHash: hashOfSecret(parent.secret),
      access: "read",
      projects: ["public"],
    } as const;
    expect(await t.devices.approve(code.user_code, { projects: ["public"], access: "read" }, stale)).toBe("forbidden");
  });

  it("2. a grandchild dies with its grandparent", async () => {
    const t = await server();
    const parent = await mintToken(t, { projects: ["public"], access: "write" });
    const child = await approveAsDevice(t, parent.secret, ["public"], "write");
    const grandchild = await approveAsDevice(t, child, ["public"], "read");
    expect((await fetch(`${t.url}/api/projects/public/files`, as(grandchild))).status).toBe(200);
    await revokeToken(t, parent.id);
    expect((await fetch(`${t.url}/api/projects/public/files`, as(grandchild))).status).toBe(401);
  });

  it("4. a waiting GET /commits?wait= ends 401 at once when its token is revoked, and at its token's expiry", async () => {
    const t = await server();
    const revoked = await mintToken(t, { projects: ["public"], access: "read" });
    const polling = fetch(`${t.url}/api/projects/public/commits?since=0&wait=20000`, as(revoked.secret));
    await eventuallyWaiting(t, 1);
    const started = Date.now();
    await revokeToken(t, revoked.id);
    const answer = await polling;
    expect(answer.status).toBe(401);
    expect(Date.now() - started).toBeLessThan(5000);

    // It must be waiting while its token still holds: then the 401 is the expiry's, not the door's.
    const expiresAt = Date.now() + 4000;
    const expiring = await mintToken(t, { projects: ["public"], access: "read", expires: expiresAt });
    const ending = fetch(`${t.url}/api/projects/public/commits?since=0&wait=20000`, as(expiring.secret));
    await eventuallyWaiting(t, 1);
    const ended = await ending;
    expect(ended.status).toBe(401);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(Date.now() - expiresAt).toBeLessThan(5000);
  });

  it("4. a waiting poll woken by a commit after its token was revoked answers 401, not the commit", async () => {
    const t = await server();
    const reader = await mintToken(t, { projects: ["public"], access: "read" });
    const polling = fetch(`${t.url}/api/projects/public/commits?since=0&wait=20000`, as(reader.secret));
    await eventuallyWaiting(t, 1);
    await revokeToken(t, reader.id);
    await t.write("after-revoke.txt", "x", "public");
    const answer = await polling;
    expect(answer.status).toBe(401);
    expect(await answer.text()).not.toContain("after-revoke");
  });

  it("5. the live poll's session parameter never reaches a file of another project", async () => {
    const t = await server();
    const put = await t.request("/sessions/s1/events?offset=0", { method: "PUT", body: "{}\n" }, "secret");
    expect(put.status).toBe(200);
    const reader = await mintToken(t, { projects: ["public"], access: "read" });
    const web = new WebClient(t.url);
    await web.signIn(reader.secret);
    const traversal = encodeURIComponent("../../secret/sessions/s1");
    const answer = await web.get(`/p/public/live?since=0&session=${traversal}&length=0`);
    expect(answer.status).toBe(400);
  });

  it("9. a token that could not approve a login cannot deny it either", async () => {
    const t = await server();
    const other = await mintToken(t, { projects: ["secret"], access: "read" });
    const web = new WebClient(t.url);
    await web.signIn(other.secret);
    const code = await deviceCode(t.url);
    const denied = await web.post("/device", { user_code: code.user_code, action: "deny" });
    expect(denied.text).not.toContain("Denied");
    // Still waiting: the admin approves it, the device gets its token.
    const admin = new WebClient(t.url);
    await admin.signIn(ADMIN);
    const approved = await admin.post("/device", { user_code: code.user_code, project: ["public"], access: "read", action: "approve" });
    expect(approved.text).toContain("Approved");
    expect((await pollToken(t.url, code.device_code)).status).toBe(200);
  });
});

function eventuallyWaiting(t: TestServer, count: number): Promise<boolean> {
  return eventually(async () => t.waiting() >= count, 5000);
}
