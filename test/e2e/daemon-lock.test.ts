import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import type { SpawnedChild } from "../kit/spawner.js";
import { journaledPaths, perTest } from "../kit/fixtures.js";
import { startMemoryRef, startProxy, eventually } from "../kit/sync.js";

/**
 * The daemon behaviour of docs/commands.md#one-watcher-per-root: one watcher per root
 * (`.uspark/lock`; a second one exits 2 within a second naming the first's pid; a stale lock is
 * taken over; a pipe or a run beside a daemon is test/e2e/beside-daemon.test.ts), one start line
 * unless --quiet, and a 401/403 at start or mid-session journals, says so and exits 1 instead of idling.
 */
const t = perTest("uspark-daemon-", { server: true });

function daemonArgs(apiUrl = t.server!.url, ...extra: string[]): string[] {
  return ["watch", "--no-stdin", "--project-id", "p1", "--api-url", apiUrl, "--root", t.root, "--debounce", "50", ...extra];
}

/** Waits for the daemon's start line, which names the root, the project and the server. */
function started(child: SpawnedChild): Promise<string> {
  return waitForOutput(child.stderr, (text) => /watching .* for project p1 on http/.test(text), 10_000);
}

describe("one watcher per root", () => {
  it("should print one start line, and make a second watcher of the root exit 2 within a second, naming the first's pid", async () => {
    const first = await startCli(daemonArgs());
    const line = await started(first.child);
    expect(line).toContain(t.root);
    expect(line).toContain(t.server!.url);
    const before = Date.now();
    const second = await (await startCli(daemonArgs(), { timeoutMs: 5000 })).result;
    expect(second.code).toBe(2);
    expect(Date.now() - before).toBeLessThan(2500);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    first.child.kill("SIGTERM");
    expect((await first.result).code).toBe(0);
    expect(readFileSync(path.join(t.root, ".uspark", ".gitignore"), "utf8")).toMatch(/^\*$/m);
  });

  it("should take over a stale lock, whose process is gone", async () => {
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    mkdirSync(path.join(t.root, ".uspark"));
    writeFileSync(path.join(t.root, ".uspark", "lock"), `${gone.stdout}\n`);
    const daemon = await startCli(daemonArgs());
    await started(daemon.child);
    expect(readFileSync(path.join(t.root, ".uspark", "lock"), "utf8").split("\n")[0]).toBe(String(daemon.child.pid));
    daemon.child.kill("SIGTERM");
    expect((await daemon.result).code).toBe(0);
  });

  it("should print no start line with --quiet", async () => {
    const daemon = await startCli(daemonArgs(t.server!.url, "--quiet"));
    // Its first request comes after its signal handlers are in place.
    await eventually(() => t.server!.requests.length > 0, 10_000, "the daemon's first request");
    daemon.child.kill("SIGTERM");
    const done = await daemon.result;
    expect(done.code).toBe(0);
    expect(done.stderr).toBe("");
  });
});

describe("a daemon whose token is refused", () => {
  it("should exit 1 with a clear message when the server says 401 at start", async () => {
    const server = await startMemoryRef("the-right-token");
    try {
      writeFileSync(path.join(t.root, "a.txt"), "to push\n");
      const done = await (await startCli([...daemonArgs(server.url), "--token", "a-revoked-token"], { timeoutMs: 10_000 })).result;
      expect(done.code, done.stderr).toBe(1);
      expect(done.stderr).toMatch(/401|unauthorized|token/i);
      expect(done.stderr).not.toContain("a-revoked-token");
    } finally {
      await server.stop();
    }
  });

  it("should journal what is pending and exit 1 when the server says 403 mid-session", async () => {
    let revoked = false;
    const proxy = await startProxy(t.server!.url, () =>
      revoked ? { kind: "answer", status: 403, body: { error: "forbidden", message: "token revoked" } } : undefined,
    );
    try {
      const daemon = await startCli(daemonArgs(proxy.url, "--verbose"), { timeoutMs: 15_000 });
      await waitForOutput(daemon.child.stderr, (text) => /ready in/.test(text), 10_000);
      revoked = true;
      writeFileSync(path.join(t.root, "late.txt"), "after the revocation\n");
      const done = await daemon.result;
      expect(done.code, done.stderr).toBe(1);
      expect(done.stderr).toMatch(/403|forbidden/);
      expect(journaledPaths(t.root)).toEqual(["late.txt"]);
    } finally {
      await proxy.close();
    }
  });
});
