import { spawn, type StdioOptions } from "node:child_process";
import { closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../kit/cli.js";
import { remoteFiles, startMemoryRef } from "../kit/sync.js";
import { journaledPaths, perTest, UNREACHABLE, writeEvents } from "../kit/fixtures.js";

const t = perTest("uspark-cli-io-");

function watchArgs(apiUrl: string, ...extra: string[]): string[] {
  return ["watch-claude", "--project-id", "p1", "--api-url", apiUrl, "--root", t.root, "--no-fs-watch", ...extra];
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI with `input` on stdin and stdout/stderr where `stdio` says ("pipe" ones are collected). */
function runWith(args: string[], input: string, stdio: StdioOptions, onStart?: (child: ReturnType<typeof spawn>) => void): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio, env: { ...process.env, NO_COLOR: "1" } });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.on("error", () => {});
  child.stdin!.end(input);
  onStart?.(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no exit within 20 s; stderr:\n${stderr}`));
    }, 20_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** /dev/full: every write fails with ENOSPC, as on a full disk. */
function withFullDevice<T>(use: (fd: number) => Promise<T>): Promise<T> {
  const fd = openSync("/dev/full", "w");
  return use(fd).finally(() => closeSync(fd));
}

describe("write errors on our own streams", () => {
  it("should exit 74 with an error, not 0, when stdout fails with ENOSPC, and still sync (defect 15)", async () => {
    t.server = await startMemoryRef();
    const file = path.join(t.root, "a.txt");
    writeFileSync(file, "still synced\n");
    const run = await withFullDevice((fd) => runWith(watchArgs(t.server!.url), writeEvents(file), ["pipe", fd, "pipe"]));
    expect(run.stderr).toMatch(/error: writing stdout failed \(ENOSPC\)/);
    expect(run.code).toBe(74);
    expect((await remoteFiles(t.server!.url)).get("a.txt")?.toString()).toBe("still synced\n");
  });

  it("should keep going when stderr's reader goes away (EPIPE): stdout whole, journal written, exit 1 (defect 14)", async () => {
    const file = path.join(t.root, "a.txt");
    writeFileSync(file, "x");
    const input = writeEvents(file) + "plain line\n".repeat(1000);
    const run = await runWith(watchArgs(UNREACHABLE, "--flush-timeout", "300", "--verbose"), input, ["pipe", "pipe", "pipe"], (child) =>
      child.stderr!.destroy(),
    );
    expect(run.signal).toBeNull();
    expect(run.stdout).toBe(input);
    expect(run.code).toBe(1);
    expect(journaledPaths(t.root)).toEqual(["a.txt"]);
  });

  it("should exit 74 when stdout fails even with nothing to sync", async () => {
    t.server = await startMemoryRef();
    const run = await withFullDevice((fd) => runWith(watchArgs(t.server!.url), "just text\n", ["pipe", fd, "pipe"]));
    expect(run.code).toBe(74);
    expect(existsSync(path.join(t.root, ".uspark", "pending.json"))).toBe(false);
  });

  it("should not exit 0 when stderr fails with ENOSPC, though everything synced", async () => {
    t.server = await startMemoryRef();
    const file = path.join(t.root, "a.txt");
    writeFileSync(file, "x");
    const input = writeEvents(file);
    const run = await withFullDevice((fd) => runWith(watchArgs(t.server!.url), input, ["pipe", "pipe", fd]));
    expect(run.stdout).toBe(input);
    expect(run.code).toBe(74);
    expect((await remoteFiles(t.server!.url)).has("a.txt")).toBe(true);
  });
});

describe("names and URLs in what we print", () => {
  const forged = "/outside/evil\u001b[31m\nuspark: synced: 9 files pushed\u202e.txt";

  it("should escape control characters of a file name in text lines (defect 5)", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--root", t.root, "--no-fs-watch"], { input: writeEvents(forged) });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/);
    expect(result.stderr.split("\n").filter((line) => line.startsWith("uspark: synced"))).toEqual([]);
    expect(result.stderr).toContain("evil\\x1b[31m\\nuspark: synced: 9 files pushed\\u{202e}.txt");
  });

  it("should keep the exact name in the JSON log", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--root", t.root, "--no-fs-watch", "--log-format", "json"], {
      input: writeEvents(forged),
    });
    const records = result.stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { path?: string });
    expect(records.some((record) => record.path === forged)).toBe(true);
  });

  it("should never print the credentials of an API URL with a typo (defect 4)", async () => {
    for (const url of [
      "http://bob:hunter2@example.com:99999/",
      "htps://bob:hunter2@example.com/",
      "https://example.com:99999/?token=hunter2",
    ]) {
      const result = await runCli(["watch-claude", "--project-id", "p1", "--api-url", url, "--root", t.root]);
      expect(result.code, url).toBe(2);
      expect(result.stderr, url).toMatch(/invalid API URL|unsupported API URL scheme/);
      expect(result.stderr, url).not.toContain("hunter2");
    }
  });
});
