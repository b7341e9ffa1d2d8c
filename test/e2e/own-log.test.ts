import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI } from "../kit/cli.js";
import { remoteFiles, eventually } from "../kit/sync.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A daemon whose log (its stderr, sent to a file by its supervisor) sits inside the tree it
 * watches: each line it writes changes the file, so it committed its own log in a loop. Its own
 * log is never synced, wherever it is in the tree, and it says so once at start.
 */

const TOKEN = "tok-own-log";
const t = perTest("uspark-own-log-", { server: true });

describe("a daemon's own log inside the tree it watches", () => {
  it("is never synced, said once at start; the tree's other files are", async () => {
    mkdirSync(path.join(t.root, "logs"));
    const log = path.join(t.root, "logs", "uspark [1].log");
    const fd = openSync(log, "a");
    const child = spawn(
      process.execPath,
      [CLI, "watch", "--no-stdin", "--api-url", t.server!.url, "--root", t.root, "--debounce", "50", "--verbose"],
      {
        cwd: t.root,
        env: { ...process.env, USPARK_TOKEN: TOKEN, USPARK_PROJECT_ID: "p" },
        stdio: ["ignore", "ignore", fd],
      },
    );
    closeSync(fd);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await eventually(() => readFileSync(log, "utf8").includes("watching"), 15_000, "the daemon's start line");
      // Each push writes lines to the log: with the loop, the log was committed after each.
      for (const name of ["a.txt", "b.txt"]) {
        writeFileSync(path.join(t.root, name), `${name}\n`);
        await eventually(async () => (await remoteFiles(t.server!.url, "p", TOKEN)).has(name), 15_000, `${name} pushed`);
      }
    } catch (error) {
      throw new Error(`${(error as Error).message}; the log:\n${readFileSync(log, "utf8").slice(0, 3000)}`);
    } finally {
      child.kill("SIGTERM");
    }
    const ended = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000, "still running 15 s after SIGTERM"))]);
    if (ended !== 0) child.kill("SIGKILL");
    expect(ended).toBe(0);
    const said = readFileSync(log, "utf8");
    expect(said.match(/not syncing logs\/uspark \[1\]\.log: it is this process's own log/g)).toHaveLength(1);
    expect([...(await remoteFiles(t.server!.url, "p", TOKEN)).keys()].sort()).toEqual(["a.txt", "b.txt"]);
  });
});
