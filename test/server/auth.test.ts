import { describe, expect, it } from "vitest";
import { isLoopbackHost, startServer } from "../../src/server/index.js";
import { createProject, sha256, tempDir, testServer } from "../kit/server.js";

const TOKEN = "s3cret-token-value";

describe("with --token", () => {
  it("answers a request without Authorization with 401 unauthorized", async () => {
    const t = await testServer({ token: TOKEN });
    const res = await fetch(`${t.url}/api/projects/demo/files`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await res.json()).toEqual({ error: "unauthorized", message: expect.any(String) });
  });

  it.each([
    ["a wrong token", `Bearer wrong`],
    ["a token that is a prefix of the right one", `Bearer ${TOKEN.slice(0, -1)}`],
    ["the right token with a longer tail", `Bearer ${TOKEN}x`],
    ["the right token under another scheme", `Basic ${TOKEN}`],
    ["the bare token without a scheme", TOKEN],
    ["an empty bearer", "Bearer "],
  ])("answers 401 for %s", async (_name, authorization) => {
    const t = await testServer({ token: TOKEN });
    const res = await fetch(`${t.url}/api/projects/demo/files`, { headers: { authorization } });
    expect(res.status).toBe(401);
  });

  it("accepts the right bearer token on every route", async () => {
    const t = await testServer({ token: TOKEN });
    expect((await t.request("/files")).status).toBe(200);
    const blob = await t.upload("hi");
    expect((await t.request(`/blobs/${blob.sha256}`, { method: "HEAD" })).status).toBe(200);
    expect((await t.request(`/blobs/${blob.sha256}`)).status).toBe(200);
    expect((await t.commit({ changes: [{ op: "put", path: "a", ...blob }] })).status).toBe(200);
  });

  it("accepts the scheme in any case", async () => {
    const t = await testServer({ token: TOKEN });
    const res = await fetch(`${t.url}/api/projects/demo/files`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  it("checks the token before anything else: unknown routes and uploads get 401 too, and nothing is stored", async () => {
    const t = await testServer({ token: TOKEN });
    expect((await fetch(`${t.url}/api/nowhere`)).status).toBe(401);
    // Outside /api/ is the web view: no bearer check there, its pages send a visitor to sign in.
    const page = await fetch(`${t.url}/p/demo`, { redirect: "manual" });
    expect([page.status, page.headers.get("location")]).toEqual([303, "/login?next=%2Fp%2Fdemo"]);
    const hash = sha256("data");
    const res = await fetch(`${t.url}/api/projects/demo/blobs/${hash}`, { method: "PUT", body: "data" });
    expect(res.status).toBe(401);
    expect((await t.request(`/blobs/${hash}`, { method: "HEAD" })).status).toBe(404);
  });

  it("never echoes the token in an answer", async () => {
    const t = await testServer({ token: TOKEN });
    const res = await fetch(`${t.url}/api/projects/demo/files`, { headers: { authorization: "Bearer nope" } });
    expect(await res.text()).not.toContain(TOKEN);
  });
});

describe("without --token", () => {
  it.each([
    ["no Authorization header", {}],
    ["any bearer token", { authorization: "Bearer whatever" }],
    ["another scheme", { authorization: "Basic abc" }],
  ])("accepts a request with %s", async (_name, headers) => {
    const t = await testServer();
    const res = await fetch(`${t.url}/api/projects/demo/files`, { headers });
    expect(res.status).toBe(200);
  });
});

describe("binding", () => {
  it.each(["0.0.0.0", "::", "192.168.1.10", "example.com"])(
    "refuses to listen on %s without a token, with code EUSAGE and a one-line reason",
    async (host) => {
      const dataDir = await tempDir();
      const error = await startServer({ dataDir, port: 0, host }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as NodeJS.ErrnoException).code).toBe("EUSAGE");
      expect((error as Error).message).toContain(host);
      expect((error as Error).message).not.toContain("\n");
    },
  );

  it("listens on a non-loopback host when a token is set", async () => {
    const dataDir = await tempDir();
    const server = await startServer({ dataDir, port: 0, host: "0.0.0.0", token: TOKEN });
    try {
      await createProject(`http://127.0.0.1:${server.port}`, "demo", { authorization: `Bearer ${TOKEN}` });
      const res = await fetch(`http://127.0.0.1:${server.port}/api/projects/demo/files`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("refuses an empty token", async () => {
    const dataDir = await tempDir();
    await expect(startServer({ dataDir, port: 0, token: "" })).rejects.toMatchObject({ code: "EUSAGE" });
  });

  it("refuses an invalid port", async () => {
    const dataDir = await tempDir();
    await expect(startServer({ dataDir, port: 70000 })).rejects.toMatchObject({ code: "EUSAGE" });
  });

  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["10.0.0.1", false],
    ["localhost.example.com", false],
  ])("classifies %s as loopback: %s", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
