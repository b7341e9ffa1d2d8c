import { cp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/index.js";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { createProject } from "../kit/server.js";
import { tempDir } from "../kit/sync.js";

/**
 * A server restored from a backup (docs/api.md, v1.3): its head is older than the version this
 * tree last synced, or has another history at it. Every command refuses it, naming both versions,
 * and changes nothing here; `uspark push --onto-rewound` commits this tree's newer files onto it.
 * Through the built CLI against the reference server over a data dir copied back from earlier.
 */

let root: string;
let data: string;
let backup: string;
let server: RunningServer;
let cleanups: (() => Promise<void>)[] = [];

const env = () => ({ USPARK_API_URL: server.url, USPARK_TOKEN: "tok", USPARK_PROJECT_ID: "p" });
const uspark = (...args: string[]) => runCli(args, { cwd: root, env: env(), timeoutMs: 30_000 });
const read = (rel: string) => readFile(path.join(root, rel), "utf8");

beforeEach(async () => {
  cleanups = [];
  for (const name of ["root", "data", "backup"] as const) {
    const made = await tempDir(`uspark-rewound-${name}-`);
    cleanups.push(made.cleanup);
    if (name === "root") root = made.dir;
    else if (name === "data") data = made.dir;
    else backup = made.dir;
  }
  server = await startServer({ dataDir: data, port: 0, host: "127.0.0.1" });
  await createProject(server.url, "p");
});

afterEach(async () => {
  await server.close();
  for (const cleanup of cleanups) await cleanup();
});

/** The server's data as it is now is the backup; restoreBackup() brings it back on the same port. */
async function takeBackup(): Promise<void> {
  await cp(data, backup, { recursive: true });
}

async function restoreBackup(): Promise<void> {
  const port = server.port;
  await server.close();
  await rm(data, { recursive: true, force: true });
  await cp(backup, data, { recursive: true });
  server = await startServer({ dataDir: data, port, host: "127.0.0.1" });
}

/** v1 (a.txt "one") pulled here, backed up; then v2 pushed from here (a.txt "two", b.txt); then the server restored to v1. */
async function syncedPastTheBackup(): Promise<void> {
  await commitFiles(server.url, "p", "tok", { "a.txt": "one\n" });
  expect((await uspark("pull")).code).toBe(0);
  await takeBackup();
  await writeFile(path.join(root, "a.txt"), "two\n");
  await writeFile(path.join(root, "b.txt"), "bee\n");
  const push = await uspark("push");
  expect(push.code, push.stderr).toBe(0);
  await restoreBackup();
}

describe("a server restored from a backup", () => {
  it("is refused by every command, naming both versions; nothing here changes (exit 1)", async () => {
    await syncedPastTheBackup();
    for (const args of [["status"], ["pull"], ["push"], ["diff"], ["pull", "--force"], ["restore", "a.txt", "--at", "1"], ["ls"]]) {
      const result = await uspark(...args);
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(1);
      expect(result.stderr, args.join(" ")).toMatch(/v1\b.*v2\b|v2\b.*v1\b/);
      expect(result.stderr, args.join(" ")).toContain("uspark push --onto-rewound");
    }
    expect(await read("a.txt")).toBe("two\n");
    expect(await read("b.txt")).toBe("bee\n");
    const listing = (await (await fetch(`${server.url}/api/projects/p/files`)).json()) as { version: number };
    expect(listing.version).toBe(1);
  });

  it("stops a two-way watch at its start, and a run before its agent starts", async () => {
    await syncedPastTheBackup();
    const watch = await runCli(["watch", "--no-stdin", "--two-way", "--debounce", "20"], { cwd: root, env: env(), timeoutMs: 30_000 });
    expect(watch.code, watch.stderr).toBe(1);
    expect(watch.stderr).toContain("uspark push --onto-rewound");
    const marker = path.join(root, "agent-started");
    const agent = ["--", process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`];
    const run = await runCli(["run", ...agent], { cwd: root, env: env(), timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain("uspark push --onto-rewound");
    await expect(readFile(marker)).rejects.toThrow();
    expect(await read("a.txt")).toBe("two\n");
    expect(await read("b.txt")).toBe("bee\n");
  });

  it("is refused at the same version with another history, and when that history went on", async () => {
    await syncedPastTheBackup();
    await commitFiles(server.url, "p", "tok", { "c.txt": "another writer's v2\n" });
    const same = await uspark("status");
    expect(same.code, same.stderr).toBe(1);
    expect(same.stderr).toMatch(/history/);
    await commitFiles(server.url, "p", "tok", { "c.txt": "and v3\n" });
    const ahead = await uspark("pull");
    expect(ahead.code, ahead.stderr).toBe(1);
    expect(ahead.stderr).toContain("uspark push --onto-rewound");
    expect(await read("a.txt")).toBe("two\n");
  });

  it("uspark push --onto-rewound commits this tree's newer files onto it and takes its history", async () => {
    await syncedPastTheBackup();
    const onto = await uspark("push", "--onto-rewound");
    expect(onto.code, onto.stderr).toBe(0);
    const files = (await (await fetch(`${server.url}/api/projects/p/files`)).json()) as {
      version: number;
      files: { path: string; size: number }[];
    };
    expect(files.version).toBe(2);
    expect(files.files.map((f) => [f.path, f.size])).toEqual([
      ["a.txt", 4],
      ["b.txt", 4],
    ]);
    const status = await uspark("status");
    expect(status.code, status.stderr + status.stdout.toString()).toBe(0);
    expect(await read("a.txt")).toBe("two\n");
  });
});
