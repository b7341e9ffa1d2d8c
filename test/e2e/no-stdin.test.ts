import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { remoteFiles, eventually } from "../kit/sync.js";

const t = perTest("uspark-no-stdin-", { server: true });

const daemonArgs = () => [
  "watch",
  "--no-stdin",
  "--project-id",
  "p1",
  "--api-url",
  t.server!.url,
  "--root",
  t.root,
  "--verbose",
  "--debounce",
  "50",
];

describe("uspark watch --no-stdin (the dev-container daemon)", () => {
  it("should sync files written after start until SIGTERM, then flush and exit 0", async () => {
    const { child, result } = await startCli(daemonArgs());
    await waitForOutput(child.stderr, (text) => /watching .* ready in/.test(text));
    writeFileSync(path.join(t.root, "first.txt"), "one\n");
    await eventually(async () => (await remoteFiles(t.server!.url)).has("first.txt"), 10_000, "first.txt on the remote");
    // The last edit, just before the signal: the end-of-session flush takes it.
    const detected = waitForOutput(child.stderr, (text) => text.includes("detected last.txt"));
    writeFileSync(path.join(t.root, "last.txt"), "two\n");
    await detected;
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code).toBe(0);
    expect(done.stdout.length).toBe(0);
    const remote = await remoteFiles(t.server!.url);
    expect(remote.get("first.txt")?.toString()).toBe("one\n");
    expect(remote.get("last.txt")?.toString()).toBe("two\n");
    // Its commits name the daemon as their agent (`uspark log`, the web view), not "unknown".
    const { commits } = (await (await fetch(`${t.server!.url}/api/projects/p1/commits?since=0`)).json()) as {
      commits: { source?: { agent?: string; host?: string } }[];
    };
    expect(commits.length).toBeGreaterThan(0);
    expect(commits.map((commit) => commit.source?.agent)).toEqual(commits.map(() => "watch"));
    // ... and the machine they came from (the web view tells two machines apart by it).
    expect(commits.map((commit) => commit.source?.host)).toEqual(commits.map(() => os.hostname()));
    // A daemon's log is read later, in a supervisor's file: every line carries its time.
    const lines = done.stderr.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z uspark: /);
  });

  it("should not read stdin: open and silent, it ends the daemon only by a signal", async () => {
    const { child, result } = await startCli(daemonArgs());
    child.stdin.end("not a stream, not read\n");
    await waitForOutput(child.stderr, (text) => /watching .* ready in/.test(text));
    writeFileSync(path.join(t.root, "after-eof.txt"), "x");
    await eventually(async () => (await remoteFiles(t.server!.url)).has("after-eof.txt"), 10_000, "after-eof.txt on the remote");
    child.kill("SIGINT");
    expect((await result).code).toBe(0);
  });

  it("should refuse --no-fs-watch with it: nothing would be seen", async () => {
    const result = await runCli([...daemonArgs(), "--no-fs-watch"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--no-stdin with --no-fs-watch would see no change at all/);
  });

  // A file written before the file watcher is ready is found by the start-up scans.
  it("should sync an edit made 0 ms after spawn", async () => {
    const { child, result } = await startCli(daemonArgs());
    writeFileSync(path.join(t.root, "early.txt"), "early\n");
    await waitForOutput(child.stderr, (text) => /watching .* ready in/.test(text));
    child.kill("SIGTERM");
    expect((await result).code).toBe(0);
    expect((await remoteFiles(t.server!.url)).get("early.txt")?.toString()).toBe("early\n");
  });
});
