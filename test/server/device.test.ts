// The device flow of `uspark login` (RFC 8628) on both stores: code, polls and their RFC errors,
// approval within the approver's reach, the token handed out once, nothing kept in clear.

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DeviceCodeAnswer } from "../../src/server/device.js";
import { startServer } from "../../src/server/index.js";
import { hashOfSecret } from "../../src/server/tokens.js";
import { storeCases, type TestServer } from "../kit/server.js";
import { mintToken } from "./web/web-client.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();
const ADMIN = "admin-token-for-device-tests";
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const ADMIN_PRINCIPAL = { kind: "admin" } as const;

async function deviceCode(url: string): Promise<DeviceCodeAnswer> {
  const res = await fetch(`${url}/api/device/code`, { method: "POST", body: new URLSearchParams({ client_id: "uspark" }) });
  expect(res.status).toBe(200);
  return (await res.json()) as DeviceCodeAnswer;
}

async function poll(url: string, code: string, grantType = GRANT): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/api/device/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: grantType, device_code: code }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.each(storeCases(pg))("device login on %s", (_name, testServer) => {
  const server = () => testServer({ token: ADMIN, projects: ["demo", "other"], devicePollSeconds: 1 });

  it("answers POST /api/device/code without a token: a short human code, the /device page, expiry and interval", async () => {
    const t = await server();
    const answer = await deviceCode(t.url);
    expect(answer.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(answer.verification_uri).toBe(`${t.url}/device`);
    expect(answer.verification_uri_complete).toBe(`${t.url}/device?user_code=${answer.user_code}`);
    expect(answer).toMatchObject({ expires_in: 900, interval: 1 });
    expect(answer.device_code.length).toBeGreaterThanOrEqual(43);
    expect(await t.devices.find(answer.user_code.toLowerCase().replace("-", " "))).toEqual({
      userCode: answer.user_code,
      expiresAt: expect.any(Number),
    });
  });

  it("polls: authorization_pending, slow_down when too fast, then once approved the token, once", async () => {
    const t = await server();
    const answer = await deviceCode(t.url);
    expect(await poll(t.url, answer.device_code)).toMatchObject({ status: 400, body: { error: "authorization_pending" } });
    expect(await poll(t.url, answer.device_code)).toMatchObject({ status: 400, body: { error: "slow_down" } });

    expect(await t.devices.approve(answer.user_code, { projects: ["demo"], access: "read" }, ADMIN_PRINCIPAL)).toBe("approved");
    const granted = await poll(t.url, answer.device_code);
    expect(granted).toMatchObject({ status: 200, body: { token_type: "Bearer", scope: "read", projects: ["demo"] } });
    const token = granted.body.access_token as string;
    const get = (project: string) => fetch(`${t.url}/api/projects/${project}/files`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get("demo")).status).toBe(200);
    expect((await get("other")).status).toBe(403);
    // Handed out once: the code is used up, and the login is no longer waiting.
    expect(await poll(t.url, answer.device_code)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await t.devices.find(answer.user_code)).toBeUndefined();
  });

  it("a denied login answers access_denied; an unknown code invalid_grant; another grant type unsupported_grant_type", async () => {
    const t = await server();
    const answer = await deviceCode(t.url);
    expect(await t.devices.deny(answer.user_code, ADMIN_PRINCIPAL)).toBe("denied");
    expect(await t.devices.approve(answer.user_code, { projects: ["demo"], access: "read" }, ADMIN_PRINCIPAL)).toBe("unknown");
    expect(await poll(t.url, answer.device_code)).toMatchObject({ status: 400, body: { error: "access_denied" } });
    expect(await poll(t.url, "no-such-code")).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await poll(t.url, answer.device_code, "password")).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } });
    expect(await t.devices.deny("BCDF-GHJK", ADMIN_PRINCIPAL)).toBe("unknown");
  });

  it("an approver may grant only within its own reach, and the token never outlives the approver's", async () => {
    const t = await server();
    const expires = Date.now() + 3_600_000;
    const minted = await mintToken(t, { projects: ["demo"], access: "read", expires });
    const approver = {
      kind: "scoped",
      tokenId: minted.id,
      tokenHash: hashOfSecret(minted.secret),
      access: "read",
      projects: ["demo"],
      expires,
    } as const;
    const answer = await deviceCode(t.url);
    expect(await t.devices.approve(answer.user_code, { projects: ["demo"], access: "write" }, approver)).toBe("forbidden");
    expect(await t.devices.approve(answer.user_code, { projects: ["other"], access: "read" }, approver)).toBe("forbidden");
    expect(await t.devices.approve(answer.user_code, { projects: [], access: "read" }, ADMIN_PRINCIPAL)).toBe("forbidden");
    expect(await t.devices.approve(answer.user_code, { projects: ["demo"], access: "read" }, approver)).toBe("approved");
    const granted = await poll(t.url, answer.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body.expires_in).toBeGreaterThan(3590);
    expect(granted.body.expires_in).toBeLessThanOrEqual(3600);
  });

  it("refuses a new code with 429 while the most logins allowed are waiting, so that a flood cannot fill the store", async () => {
    const t = await testServer({ token: ADMIN, maxWaitingLogins: 2 });
    await deviceCode(t.url);
    const second = await deviceCode(t.url);
    const refused = await fetch(`${t.url}/api/device/code`, { method: "POST" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    // One fewer waiting (denied and its answer taken) makes room again.
    await t.devices.deny(second.user_code, ADMIN_PRINCIPAL);
    await poll(t.url, second.device_code);
    await deviceCode(t.url);
  });

  it("keeps neither the device code nor the user code nor the token in clear", async () => {
    const t = await server();
    const answer = await deviceCode(t.url);
    await t.devices.approve(answer.user_code, { projects: ["demo"], access: "write" }, ADMIN_PRINCIPAL);
    const token = (await poll(t.url, answer.device_code)).body.access_token as string;
    const second = await deviceCode(t.url);
    const stored = await storedCredentials(t);
    for (const secret of [answer.device_code, token, second.device_code, second.user_code, second.user_code.replace("-", "")]) {
      expect(stored).not.toContain(secret);
    }
  });
});

describe("device login across PostgreSQL replicas", () => {
  it("a code from one replica is approved through another and its token fetched from a third poll on the first", async () => {
    const databaseUrl = await pg().freshSchemaUrl();
    const [a, b] = [await startServer({ databaseUrl, port: 0, token: ADMIN }), await startServer({ databaseUrl, port: 0, token: ADMIN })];
    try {
      const answer = await deviceCode(a.url);
      expect(await b.devices.find(answer.user_code)).toBeDefined();
      expect(await b.devices.approve(answer.user_code, { projects: ["demo"], access: "read" }, ADMIN_PRINCIPAL)).toBe("approved");
      expect((await poll(a.url, answer.device_code)).status).toBe(200);
      expect((await poll(b.url, answer.device_code)).body.error).toBe("invalid_grant");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

async function storedCredentials(t: TestServer): Promise<string> {
  if (t.databaseUrl) {
    const rows = await t.query<{ row: string }>(
      "SELECT row_to_json(t)::text AS row FROM tokens t UNION ALL SELECT row_to_json(d)::text FROM device_logins d",
    );
    return rows.map((row) => row.row).join("\n");
  }
  const dir = join(t.dataDir, "credentials");
  const names = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = names.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  return (await Promise.all(files.map(async (file) => `${file}\n${await readFile(file, "utf8")}`))).join("\n");
}
