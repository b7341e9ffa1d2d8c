import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { isBlobUpload, remoteFiles, remoteVersion, startMemoryRef, tempDir, type RefServer } from "../kit/sync.js";

let root: string;
let cleanup: () => Promise<void>;
let server: RefServer;

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-cli-fs-"));
  server = await startMemoryRef();
});
afterEach(async () => {
  await server.stop();
  await cleanup();
});

/** The watcher with the file system backstop on, its stdin left open until the test ends it; stderr in JSON lines. */
async function startWatching(...extra: string[]) {
  const run = await startCli([
    "watch",
    "--project-id",
    "p1",
    "--api-url",
    server.url,
    "--root",
    root,
    "--verbose",
    "--log-format",
    "json",
    "--debounce",
    "50",
    ...extra,
  ]);
  await waitForOutput(run.child.stderr, (text) => /watching \d+ directories.*ready in/.test(text));
  return run;
}

interface LogRecord {
  level: string;
  event: string;
  message: string;
  path?: string;
  cause?: string;
  kind?: string;
}

function records(stderr: string): LogRecord[] {
  return stderr
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as LogRecord);
}

/**
 * What the file watcher itself reported, as "write a.ts" / "delete a.ts": the "change" records of
 * cause "fs" (--verbose). The end scan syncs whatever changed since the start, so the remote alone
 * cannot tell whether the watcher saw anything; these records can (with --no-fs-watch there are none).
 */
function watcherSaw(stderr: string): string[] {
  return records(stderr)
    .filter((record) => record.event === "change" && record.cause === "fs")
    .map((record) => `${record.kind} ${record.path}`);
}

function git(...args: string[]): void {
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", ...args], {
    cwd: root,
    stdio: "ignore",
  });
}

describe("the file system backstop through the CLI", () => {
  it("should sync the 20 files a git checkout changes", async () => {
    mkdirSync(path.join(root, "src"));
    const files = Array.from({ length: 20 }, (_, i) => `src/f${i}.ts`);
    for (const file of files) writeFileSync(path.join(root, file), `main ${file}\n`);
    git("init", "-q");
    git("add", ".");
    git("commit", "-qm", "main");
    git("checkout", "-qb", "feature");
    for (const file of files) writeFileSync(path.join(root, file), `feature ${file}\n`);
    git("commit", "-qam", "feature");
    git("checkout", "-q", "main");

    const { child, result } = await startWatching();
    git("checkout", "-q", "feature");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect(files.filter((file) => !watcherSaw(done.stderr).includes(`write ${file}`))).toEqual([]);
    const remote = await remoteFiles(server.url);
    expect([...remote.keys()].sort()).toEqual([...files].sort());
    for (const file of files) expect(remote.get(file)?.toString()).toBe(`feature ${file}\n`);
  });

  it("should push an edit once when both a tool event and the watcher see it", async () => {
    const { child, result } = await startWatching("--agent", "claude");
    const file = path.join(root, "both.ts");
    writeFileSync(file, "seen twice\n");
    child.stdin.write(
      JSON.stringify({
        type: "assistant",
        session_id: "s",
        message: { content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: file, content: "seen twice\n" } }] },
      }) +
        "\n" +
        JSON.stringify({
          type: "user",
          session_id: "s",
          message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
        }) +
        "\n",
    );
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    // Both saw it: the tool event and the file watcher.
    const causes = records(done.stderr)
      .filter((record) => record.event === "change" && record.path === "both.ts")
      .map((record) => record.cause);
    expect(causes).toContain("Write");
    expect(causes).toContain("fs");
    expect(await remoteVersion(server.url)).toBe(1);
    expect(server.requests.filter(isBlobUpload)).toHaveLength(1);
  });

  it("should sync the edits of an agent that emits no tool events", async () => {
    const { child, result } = await startWatching();
    child.stdin.write("Kimi text mode: I will now edit the file.\n");
    writeFileSync(path.join(root, "notes.md"), "# written without a tool event\n");
    child.stdin.write("Done.\n");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect(done.stdout.toString()).toBe("Kimi text mode: I will now edit the file.\nDone.\n");
    expect(watcherSaw(done.stderr)).toContain("write notes.md");
    expect((await remoteFiles(server.url)).get("notes.md")?.toString()).toBe("# written without a tool event\n");
  });

  it("should leave .gitignored build output alone", async () => {
    writeFileSync(path.join(root, ".gitignore"), "build/\n*.log\n");
    const { child, result } = await startWatching();
    mkdirSync(path.join(root, "build"));
    writeFileSync(path.join(root, "build", "out.js"), "generated");
    writeFileSync(path.join(root, "debug.log"), "noise");
    writeFileSync(path.join(root, "kept.ts"), "source");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    // The watcher reported the source file, and never the ignored ones.
    expect(new Set(watcherSaw(done.stderr))).toEqual(new Set(["write kept.ts"]));
    // With no base every file not ignored is new: the start scan pushes .gitignore too.
    expect([...(await remoteFiles(server.url)).keys()].sort()).toEqual([".gitignore", "kept.ts"]);
  });

  it("should delete remotely a file removed by a shell command", async () => {
    writeFileSync(path.join(root, "old.txt"), "old");
    writeFileSync(path.join(root, "stays.txt"), "stays");
    expect((await runCli(["push", "--project-id", "p1", "--api-url", server.url, "--root", root])).code).toBe(0);
    const { child, result } = await startWatching();
    rmSync(path.join(root, "old.txt"));
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect(new Set(watcherSaw(done.stderr))).toEqual(new Set(["delete old.txt"]));
    expect([...(await remoteFiles(server.url)).keys()]).toEqual(["stays.txt"]);
  });
});

describe("one ignore decision and every unsynced file counted (issue 15)", () => {
  const toolWrite = (id: string, file: string) =>
    JSON.stringify({
      type: "assistant",
      session_id: "s",
      message: { content: [{ type: "tool_use", id, name: "Write", input: { file_path: file, content: "x" } }] },
    }) +
    "\n" +
    JSON.stringify({ type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } }) +
    "\n";

  it("should not push a gitignored file a tool wrote, and say so once naming the rule (defect 2)", async () => {
    writeFileSync(path.join(root, ".gitignore"), "# secrets\n*.pem\n/.env\n");
    writeFileSync(path.join(root, ".env"), "SECRET=1\n");
    writeFileSync(path.join(root, "key.pem"), "-----BEGIN\n");
    writeFileSync(path.join(root, "app.ts"), "ok\n");
    const input =
      toolWrite("t1", path.join(root, ".env")) +
      toolWrite("t2", path.join(root, ".env")) +
      toolWrite("t3", path.join(root, "key.pem")) +
      toolWrite("t4", path.join(root, "app.ts"));
    const done = await runCli(
      ["watch", "--project-id", "p1", "--api-url", server.url, "--root", root, "--agent", "claude", "--no-fs-watch", "--debounce", "20"],
      { input },
    );
    expect(done.code).toBe(0);
    expect([...(await remoteFiles(server.url)).keys()].sort()).toEqual([".gitignore", "app.ts"]);
    expect(done.stderr.match(/not synced \.env: ignored by \.gitignore:3 \(\/\.env\)/g)).toHaveLength(1);
    expect(done.stderr).toContain("not synced key.pem: ignored by .gitignore:2 (*.pem)");
  });

  it("should not push a file that became ignored between its tool write and the flush", async () => {
    writeFileSync(path.join(root, "later.env"), "SECRET=1\n");
    const { child, result } = await startWatching("--agent", "claude", "--debounce", "60000", "--max-wait", "60000");
    const detected = waitForOutput(child.stderr, (text) => /detected later\.env/.test(text));
    child.stdin.write(toolWrite("t1", path.join(root, "later.env")));
    await detected;
    writeFileSync(path.join(root, ".gitignore"), "*.env\n");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect(watcherSaw(done.stderr)).toContain("write .gitignore");
    expect([...(await remoteFiles(server.url)).keys()]).toEqual([".gitignore"]);
  });

  it("should count a file whose name is not valid UTF-8 as not synced: named in the summary, exit 1 (defect 9)", async () => {
    const { child, result } = await startWatching();
    writeFileSync(Buffer.from(path.join(root, "caf\xe9.txt"), "latin1"), "x");
    writeFileSync(path.join(root, "fine.txt"), "x");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(1);
    expect(records(done.stderr).map((record) => record.message)).toContainEqual(
      expect.stringMatching(/^not synced \(the name is not valid UTF-8\): caf\\xe9\.txt/),
    );
    expect(new Set(watcherSaw(done.stderr))).toEqual(new Set(["write fine.txt"]));
    expect([...(await remoteFiles(server.url)).keys()]).toEqual(["fine.txt"]);
  });

  it("should count such a file without the file watcher too (--no-fs-watch): exit 1, named in one warning (defect 9)", async () => {
    writeFileSync(Buffer.from(path.join(root, "caf\xe9.txt"), "latin1"), "x");
    writeFileSync(path.join(root, "fine.txt"), "x");
    // Two scans walk past it (start and end): one warning all the same.
    const done = await runCli([
      "watch",
      "--project-id",
      "p1",
      "--api-url",
      server.url,
      "--root",
      root,
      "--no-fs-watch",
      "--debounce",
      "20",
    ]);
    expect(done.code).toBe(1);
    expect(done.stderr.match(/not synced caf\\xe9\.txt: the name is not valid UTF-8/g)).toHaveLength(1);
    expect(done.stderr).toMatch(/not synced \(the name is not valid UTF-8\): caf\\xe9\.txt/);
    expect([...(await remoteFiles(server.url)).keys()]).toEqual(["fine.txt"]);
  });
});
