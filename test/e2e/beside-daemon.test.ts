import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import type { SpawnedChild } from "../kit/spawner.js";
import { listedSessions } from "../kit/transcript.js";
import { remoteFiles, eventually } from "../kit/sync.js";
import { perTest, writeEvents } from "../kit/fixtures.js";

/**
 * The dev-container recipe (README, docs/commands.md): a daemon (`uspark watch --no-stdin
 * --two-way`) watches the tree, and `claude … | uspark watch-claude` runs in that same tree. The
 * pipe runs beside the daemon, without the root lock and without a file watcher of its own,
 * syncing what its agent's events name; it exited 2 ("another uspark is already watching").
 */
const t = perTest("uspark-beside-", { server: true });
const connection = () => ["--project-id", "p1", "--api-url", t.server!.url, "--root", t.root];
const remote = async () => new Map([...(await remoteFiles(t.server!.url, "p1"))].map(([p, b]) => [p, b.toString()]));

async function startDaemon(): Promise<{ child: SpawnedChild; result: ReturnType<typeof runCli> }> {
  const daemon = await startCli(["watch", "--no-stdin", "--two-way", ...connection(), "--debounce", "50"], { timeoutMs: 60_000 });
  await waitForOutput(daemon.child.stderr, (text) => /watching .* for project p1 on http/.test(text), 10_000);
  return daemon;
}

/** What an agent did: the file written, then its tool events on the pipe. */
function agentWrites(rel: string, text: string): string {
  const file = path.join(t.root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return writeEvents(file, text);
}

describe("a pipe beside a daemon", () => {
  it("watch-claude in a tree a daemon watches: exit 0, its edits and transcript on the remote, the daemon unharmed, no false conflict", async () => {
    const daemon = await startDaemon();
    const piped = await runCli(["watch-claude", "--transcript", ...connection()], {
      input: agentWrites("src/app.ts", "by the agent\n"),
      timeoutMs: 30_000,
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain(`beside the uspark (pid ${daemon.child.pid}) that watches`);
    expect((await remote()).get("src/app.ts")).toBe("by the agent\n");
    expect((await listedSessions(t.server!.url, "p1")).length).toBe(1);

    // The daemon goes on: an edit made now is its to push, and nobody calls anything a conflict.
    writeFileSync(path.join(t.root, "src/app.ts"), "edited after\n");
    await eventually(async () => (await remote()).get("src/app.ts") === "edited after\n", 15_000, "the daemon's push");
    const status = await runCli(["status", "--root", t.root, "--api-url", t.server!.url, "--project-id", "p1"], { timeoutMs: 30_000 });
    expect(status.code, status.stdout.toString()).toBe(0);
    daemon.child.kill("SIGTERM");
    const ended = await daemon.result;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).not.toContain("conflict");
    expect(piped.stderr).not.toContain("conflict");
    expect([...(await remote()).keys()].filter((p) => p.includes(".conflict-"))).toEqual([]);
  });

  it("beside a daemon, a stream with no JSON is said to leave the changes to the daemon's file watcher, not to nobody", async () => {
    const daemon = await startDaemon();
    const piped = await runCli(["watch-claude", ...connection()], { input: "plain text, no stream flag\n", timeoutMs: 30_000 });
    expect(piped.stderr).toContain("no JSON event in the agent's output so far");
    expect(piped.stderr).toContain("Only the file watcher sees its changes");
    daemon.child.kill("SIGTERM");
    expect((await daemon.result).code).toBe(0);
  });

  it("uspark run beside a daemon runs its agent and syncs what it wrote", async () => {
    const daemon = await startDaemon();
    const file = path.join(t.root, "made-by-run.txt");
    const agent = ["--", process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(file)}, "ran\\n")`];
    const run = await runCli(["run", "--raw", ...connection(), ...agent], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(file)).toBe(true);
    await eventually(async () => (await remote()).get("made-by-run.txt") === "ran\n", 15_000, "made-by-run.txt on the remote");
    daemon.child.kill("SIGTERM");
    expect((await daemon.result).code).toBe(0);
  });
});
