// `uspark login` / `uspark logout` through the built CLI against a real server: the test plays the
// person on the /device page by approving through the server's DeviceLogins.

import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { afterPoll } from "../../src/commands/login-run.js";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { tempDir, testServer } from "../kit/server.js";

const ADMIN = "admin-token-for-login-tests";
const ADMIN_PRINCIPAL = { kind: "admin" } as const;

async function loginServer() {
  return testServer({ token: ADMIN, projects: ["demo", "other"], devicePollSeconds: 1 });
}

/** Starts `uspark login` with its own HOME; resolves with the user code it printed. */
async function startLogin(url: string, home: string, more: string[] = []) {
  const login = await startCli(["login", "--api-url", url, ...more], { env: { HOME: home, USPARK_API_URL: "", USPARK_TOKEN: "" } });
  const printed = await waitForOutput(login.child.stderr, (text) => /enter the code [A-Z]{4}-[A-Z]{4}/.test(text));
  return { ...login, userCode: /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(printed)![1]!, printed };
}

function configFile(home: string): string {
  return join(home, ".uspark", "config.json");
}

describe("uspark login", () => {
  it("asks for the projects and scope of --project and --scope and names its machine: the approval page fills its form in with them", async () => {
    const t = await loginServer();
    const login = await startLogin(t.url, await tempDir(), ["--project", "demo", "--project", "other", "--scope", "write"]);
    expect((await t.devices.find(login.userCode))?.asked).toEqual({ projects: ["demo", "other"], access: "write", host: hostname() });
    expect(await t.devices.approve(login.userCode, { projects: ["demo"], access: "write" }, ADMIN_PRINCIPAL)).toBe("approved");
    expect((await login.result).code).toBe(0);
  });

  it("prints the code and the /device address on stderr, waits for approval, saves the token 0600 for that server only", async () => {
    const t = await loginServer();
    const home = await tempDir();
    const login = await startLogin(t.url, home);
    expect(login.printed).toContain(`${t.url}/device`);
    expect(await t.devices.approve(login.userCode, { projects: ["demo"], access: "write" }, ADMIN_PRINCIPAL)).toBe("approved");
    const result = await login.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.length).toBe(0);
    expect(result.stderr).toContain(`logged in to ${t.url} (write on demo)`);

    const file = configFile(home);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, "utf8")) as { apiUrl: string; servers: Record<string, { token: string }> };
    expect(saved.apiUrl).toBe(t.url);
    const token = saved.servers[t.url]!.token;
    expect(result.stderr).not.toContain(token);

    // The saved token is used with no flag at all, and holds to its scope.
    const env = { HOME: home, USPARK_API_URL: "", USPARK_TOKEN: "" };
    const listed = await runCli(["projects", "--json"], { env, cwd: home });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout.toString()) as { projects: { id: string }[] }).projects.map((p) => p.id)).toEqual(["demo"]);
    // It goes to no other server.
    const seen: (string | undefined)[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized","message":"no"}');
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => other.once("listening", resolve));
    try {
      await runCli(["projects", "--api-url", `http://127.0.0.1:${(other.address() as AddressInfo).port}`], { env, cwd: home });
    } finally {
      other.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((header) => header?.includes(token))).toEqual([]);
  });

  it("exits 1 saying so when the login is denied, and saves nothing", async () => {
    const t = await loginServer();
    const home = await tempDir();
    const login = await startLogin(t.url, home);
    expect(await t.devices.deny(login.userCode, { kind: "admin" })).toBe("denied");
    const result = await login.result;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the login was denied");
    await expect(stat(configFile(home))).rejects.toThrow(/ENOENT/);
  });

  it("says a server without device login is a usage error (exit 2)", async () => {
    const home = await tempDir();
    const old = createServer((_req, res) => res.writeHead(404).end('{"error":"not_found"}')).listen(0, "127.0.0.1");
    await new Promise((resolve) => old.once("listening", resolve));
    try {
      const url = `http://127.0.0.1:${(old.address() as AddressInfo).port}`;
      const result = await runCli(["login", "--api-url", url], { env: { HOME: home } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("has no device login");
    } finally {
      old.close();
    }
  });

  it("says a server started without a token needs no login (exit 0, nothing saved), and an unreachable one in a person's words (exit 1)", async () => {
    const home = await tempDir();
    const open = await testServer({ projects: ["demo"] });
    const result = await runCli(["login", "--api-url", open.url], { env: { HOME: home, USPARK_TOKEN: "" } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(`uspark: ${open.url} was started without a token: uspark needs none there, nothing to log in for\n`);
    await expect(stat(configFile(home))).rejects.toThrow();
    const closed = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => closed.once("listening", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
    const down = await runCli(["login", "--api-url", `http://127.0.0.1:${port}`], { env: { HOME: home } });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`uspark: error: cannot reach http://127.0.0.1:${port}: connection refused\n`);
  });

  it("keeps the other keys and servers of the file; logout removes that server's token only", async () => {
    const t = await loginServer();
    const home = await tempDir();
    await mkdir(join(home, ".uspark"), { mode: 0o700 });
    const before = { projectId: "demo", servers: { "https://elsewhere.example": { token: "kept" } } };
    await writeFile(configFile(home), JSON.stringify(before), { mode: 0o600 });
    const login = await startLogin(t.url, home);
    await t.devices.approve(login.userCode, { projects: ["demo"], access: "read" }, ADMIN_PRINCIPAL);
    expect((await login.result).code).toBe(0);
    const saved = JSON.parse(await readFile(configFile(home), "utf8")) as typeof before & { servers: Record<string, unknown> };
    expect(saved.projectId).toBe("demo");
    expect(Object.keys(saved.servers).sort()).toEqual([t.url, "https://elsewhere.example"].sort());

    const env = { HOME: home, USPARK_API_URL: "", USPARK_TOKEN: "" };
    const out = await runCli(["logout", "--api-url", t.url], { env });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`logged out of ${t.url}`);
    const after = JSON.parse(await readFile(configFile(home), "utf8")) as { servers: Record<string, unknown> };
    expect(Object.keys(after.servers)).toEqual(["https://elsewhere.example"]);
    expect((await stat(configFile(home))).mode & 0o777).toBe(0o600);
    // Without the token the server refuses (it was started with an admin token).
    const refused = await runCli(["projects", "--api-url", t.url], { env, cwd: home });
    expect(refused.code).not.toBe(0);
    const again = await runCli(["logout", "--api-url", t.url], { env });
    expect(again.stderr).toContain("not logged in");
  });

  it("a command warns once about a config file others may read (naming its mode) and about each unknown key, and narrows the file", async () => {
    const t = await loginServer();
    const home = await tempDir();
    await mkdir(join(home, ".uspark"));
    await writeFile(configFile(home), JSON.stringify({ apiUrl: t.url, token: ADMIN, tokn: "typo" }));
    await chmod(configFile(home), 0o644);
    const result = await runCli(["projects"], { env: { HOME: home, USPARK_API_URL: "", USPARK_TOKEN: "" }, cwd: home });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.match(/had mode 0644, readable by others: narrowed to 0600/g)).toHaveLength(1);
    expect(result.stderr.match(/unknown key "tokn"/g)).toHaveLength(1);
    expect(result.stderr).not.toContain(ADMIN);
    expect((await stat(configFile(home))).mode & 0o777).toBe(0o600);
  });
});

describe("afterPoll", () => {
  it("waits on authorization_pending, 5 s longer after slow_down, stops on a token or any other answer", () => {
    expect(afterPoll(400, { error: "authorization_pending" }, 5)).toEqual({ kind: "wait", interval: 5 });
    expect(afterPoll(400, { error: "slow_down" }, 5)).toEqual({ kind: "wait", interval: 10 });
    expect(afterPoll(200, { access_token: "x", scope: "read", projects: ["a", "b"] }, 5)).toEqual({
      kind: "token",
      token: "x",
      scope: "read on a, b",
    });
    expect(afterPoll(400, { error: "access_denied" }, 5)).toMatchObject({ kind: "fail", message: expect.stringContaining("denied") });
    expect(afterPoll(400, { error: "expired_token" }, 5)).toMatchObject({ kind: "fail", message: expect.stringContaining("expired") });
    expect(afterPoll(500, {}, 5)).toEqual({ kind: "fail", message: "the server answered 500" });
  });
});
