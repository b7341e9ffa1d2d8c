import { appendFile, mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { createProject } from "../kit/server.js";
import { sha256, tempDir } from "../kit/sync.js";

/**
 * A file and a directory under one name (`x` and `x/y`): the server refuses to make one (409,
 * docs/api.md v1.3), and a client that meets one (an older server let it in) says so, keeps both
 * local versions and exits 1; status never calls it in sync. Built CLI, reference server.
 */

let a: string;
let b: string;
let data: string;
let server: RunningServer;
let cleanups: (() => Promise<void>)[] = [];

const uspark = (root: string, ...args: string[]) =>
  runCli(args, { cwd: root, env: { USPARK_API_URL: server.url, USPARK_TOKEN: "tok", USPARK_PROJECT_ID: "p" }, timeoutMs: 30_000 });
const files = async () =>
  ((await (await fetch(`${server.url}/api/projects/p/files`)).json()) as { files: { path: string }[] }).files.map((f) => f.path);

beforeEach(async () => {
  cleanups = [];
  const dirs: string[] = [];
  for (let i = 0; i < 3; i++) {
    const made = await tempDir("uspark-clash-");
    cleanups.push(made.cleanup);
    dirs.push(made.dir);
  }
  [a, b, data] = dirs as [string, string, string];
  server = await startServer({ dataDir: data, port: 0, host: "127.0.0.1" });
  await createProject(server.url, "p");
});

afterEach(async () => {
  await server.close();
  for (const cleanup of cleanups) await cleanup();
});

describe("a file and a directory under one name", () => {
  it("from two writers: the second one's is a conflict copy beside the file; both local versions kept, exit 1", async () => {
    await commitFiles(server.url, "p", "tok", { x: "file\n" });
    expect((await uspark(a, "pull")).code).toBe(0);
    expect((await uspark(b, "pull")).code).toBe(0);
    await rm(path.join(a, "x"));
    await mkdir(path.join(a, "x"));
    await writeFile(path.join(a, "x", "y"), "under x\n");
    await writeFile(path.join(b, "x"), "file edited\n");
    expect((await uspark(b, "push")).code).toBe(0);
    const push = await uspark(a, "push");
    expect(push.code, push.stderr).toBe(1);
    expect(push.stderr).toMatch(/conflict x\/y: .*x/);
    const remote = await files();
    expect(remote).toContain("x");
    expect(remote.filter((p) => p !== "x")).toEqual([expect.stringMatching(/^x\.conflict-\d{8}-\d{6}-.+-[0-9a-f]{6}\/y$/)]);
    expect(await readFile(path.join(a, "x", "y"), "utf8")).toBe("under x\n");
    const status = await uspark(a, "status");
    expect(status.code).toBe(1);
    expect(status.stdout.toString()).not.toContain("in sync: nothing");
  });

  it("met in the remote's data (an older server let it in): said, both local versions kept, exit 1; status not in sync", async () => {
    await commitFiles(server.url, "p", "tok", { x: "file\n" });
    const bytes = Buffer.from("under\n");
    await fetch(`${server.url}/api/projects/p/blobs/${sha256(bytes)}`, { method: "PUT", body: bytes });
    const port = server.port;
    await server.close();
    const log = path.join(data, "projects", (await readdir(path.join(data, "projects")))[0]!, "commits.ndjson");
    await appendFile(
      log,
      JSON.stringify({
        version: 2,
        key: "old",
        at: new Date().toISOString(),
        changes: [{ op: "put", path: "x/y", sha256: sha256(bytes), size: bytes.length }],
      }) + "\n",
    );
    server = await startServer({ dataDir: data, port, host: "127.0.0.1" });
    await mkdir(path.join(a, "x"));
    await writeFile(path.join(a, "x", "y"), "mine\n");
    for (const args of [["push"], ["push", "--force"]]) {
      const push = await uspark(a, ...args);
      expect(push.code, `${args.join(" ")}: ${push.stderr}`).toBe(1);
      expect(push.stderr).toMatch(/x\/y.*file and .*directory|file and .*directory.*x\/y/);
    }
    const status = await uspark(a, "status", "--json");
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout.toString())).toMatchObject({
      inSync: false,
      paths: expect.arrayContaining([{ path: "x/y", status: "refused" }]),
    });
    const pull = await uspark(a, "pull");
    expect(pull.code).toBe(1);
    expect(await readFile(path.join(a, "x", "y"), "utf8")).toBe("mine\n");
  });
});
