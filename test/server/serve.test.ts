import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { existsSync } from "node:fs";
import path from "node:path";
import { runServe, startLines, startServer } from "../../src/server/index.js";
import { startCli, waitForOutput } from "../kit/cli.js";
import { spawnServe } from "../kit/serve-child.js";
import { createProject, sha256, tempDir, testServer } from "../kit/server.js";

const TOKEN = "tok-never-printed-4242";

async function commitOne(url: string, headers: Record<string, string> = {}): Promise<void> {
  await createProject(url, "demo", headers);
  const api = `${url}/api/projects/demo`;
  const body = "hello";
  await fetch(`${api}/blobs/${sha256(body)}`, { method: "PUT", body, headers });
  const res = await fetch(`${api}/commits`, {
    method: "POST",
    headers: { ...headers, "idempotency-key": randomUUID() },
    body: JSON.stringify({
      changes: [
        { op: "put", path: "a.txt", sha256: sha256(body), size: 5 },
        { op: "delete", path: "b.txt" },
      ],
    }),
  });
  expect(res.status).toBe(200);
}

describe("runServe (uspark serve)", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("prints one listening line and exits 0 on %s", async (signal) => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0 });
    const url = await serve.listening();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await serve.waitForStderr("web view:");
    expect(serve.stderr()).toBe(
      `uspark serve: listening on ${url} (data: ${dataDir}, token: not required)\n` +
        `uspark serve: web view: ${url}/; next: uspark projects create <id>, then pipe an agent into uspark watch-claude --project-id <id>\n`,
    );
    serve.child.kill(signal);
    expect(await serve.exited).toEqual({ code: 0, signal: null });
  });

  it("says a token is required when one is set, and never prints it, even when verbose", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0, token: TOKEN, verbose: true });
    const url = await serve.listening();
    expect(serve.stderr()).toContain("token: required)");
    await commitOne(url, { authorization: `Bearer ${TOKEN}` });
    await fetch(`${url}/api/projects/demo/files`, { headers: { authorization: "Bearer wrong" } });
    await serve.waitForStderr(" 401 ");
    serve.child.kill("SIGTERM");
    await serve.exited;
    expect(serve.stderr()).not.toContain(TOKEN);
  });

  it("logs one line per commit with project, version and number of changes", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0 });
    const url = await serve.listening();
    await commitOne(url);
    await serve.waitForStderr("uspark serve: demo is at version 1 (2 changes)\n");
    serve.child.kill("SIGTERM");
    await serve.exited;
    expect(serve.stderr()).not.toMatch(/ PUT | POST /);
  });

  it("prints one line per request only when verbose", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0, verbose: true });
    const url = await serve.listening();
    await createProject(url, "demo");
    await fetch(`${url}/api/projects/demo/files`);
    await serve.waitForStderr(/uspark serve: GET \/api\/projects\/demo\/files 200 \d+ms\n/);
  });

  it("keeps serving when the reader of its stderr goes away (EPIPE), and exits 0 on SIGTERM", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0, verbose: true });
    const url = await serve.listening();
    serve.child.stderr!.destroy();
    let alive = true;
    void serve.exited.then(() => (alive = false));
    // Each request is a log line written into the broken pipe.
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${url}/healthz`).catch(() => undefined);
      expect(res?.status, `request ${i}`).toBe(200);
    }
    expect(alive).toBe(true);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toEqual({ code: 0, signal: null });
  });

  it("prints no commit lines when quiet", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0, quiet: true });
    const url = await serve.listening();
    await commitOne(url);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(serve.stderr().trim().split("\n")).toHaveLength(1);
  });

  it("with neither --data nor --db keeps its store in ~/.uspark/serve-data and says so; -q leaves out the web view's line", async () => {
    const home = await tempDir();
    const { child, result } = await startCli(["serve", "--port", "0"], { env: { HOME: home, USPARK_DATABASE_URL: "" } });
    const said = await waitForOutput(child.stderr, (text) => text.includes("web view:"));
    expect(said).toContain(
      `(data: ${home}/.uspark/serve-data, the default store (--data <dir> or --db <url> for another), token: not required)`,
    );
    const url = /listening on (\S+)/.exec(said)![1]!;
    expect((await fetch(`${url}/api/projects`, { method: "POST", body: JSON.stringify({ id: "first" }) })).status).toBe(201);
    child.kill("SIGTERM");
    expect((await result).code).toBe(0);
    expect(existsSync(path.join(home, ".uspark", "serve-data"))).toBe(true);
    const quiet = await startCli(["serve", "--port", "0", "-q", "--data", home], { env: { USPARK_DATABASE_URL: "" } });
    await waitForOutput(quiet.child.stderr, (text) => text.includes("listening on"));
    quiet.child.kill("SIGTERM");
    expect((await quiet.result).stderr).not.toContain("web view:");
  });

  it("names the web view and the admin token to sign in with when a token is required", () => {
    const lines = startLines({ token: "t", publicUrl: "https://uspark.example.com/" }, "http://127.0.0.1:4400", "/data");
    expect(lines[0]).toBe("listening on http://127.0.0.1:4400 (data: /data, token: required)");
    expect(lines[1]).toMatch(/^web view: https:\/\/uspark\.example\.com\/ \(sign in with the admin token, or a scoped one\); next: /);
  });

  it("rejects with code EUSAGE, before listening, for a non-loopback host without a token", async () => {
    const dataDir = await tempDir();
    await expect(runServe({ dataDir, port: 0, host: "0.0.0.0" })).rejects.toMatchObject({
      code: "EUSAGE",
      message: expect.stringContaining("without --token"),
    });
  });
});

describe("close()", () => {
  it("lets an in-flight upload finish and be answered, then stops listening", async () => {
    const t = await testServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    const body = "in flight";
    const hash = sha256(body);
    const req = httpRequest(`${t.url}/api/projects/demo/blobs/${hash}`, {
      method: "PUT",
      agent,
      headers: { expect: "100-continue", "content-length": String(body.length) },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
    });
    // "100 Continue" means the server has the request in hand.
    await new Promise<void>((resolve) => req.once("continue", resolve));
    const closed = t.close();
    req.end(body);
    expect(await answered).toBe(201);
    // The kept-alive connection is let go at once rather than after the 5 s keep-alive timeout.
    const started = performance.now();
    await closed;
    expect(performance.now() - started).toBeLessThan(4000);
    await expect(fetch(`${t.url}/api/projects/demo/files`)).rejects.toThrow();
    const reopened = await startServer({ dataDir: t.dataDir, port: 0 });
    onTestFinished(() => reopened.close());
    expect((await fetch(`${reopened.url}/api/projects/demo/blobs/${hash}`)).status).toBe(200);
  });

  it("lets go at once of a connection that never sent a request (a browser's preconnect)", async () => {
    const t = await testServer();
    const socket = connect(Number(new URL(t.url).port), "127.0.0.1");
    onTestFinished(() => void socket.destroy());
    await new Promise((resolve) => socket.once("connect", resolve));
    const letGo = new Promise((resolve) => socket.once("close", resolve));
    // Before: close() waited for it until Node's 60 s headers timeout (the web view's browser tests hung there).
    const started = performance.now();
    await t.close();
    await letGo;
    expect(performance.now() - started).toBeLessThan(4000);
  });
});
