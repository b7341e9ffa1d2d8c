import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { commitFiles } from "../kit/remote.js";
import { remoteCommits, remoteFiles } from "../kit/sync.js";

const FAKE_AGENT = path.join(import.meta.dirname, "fixtures", "fake-agent.sh");

const t = perTest("uspark-run-", { server: true });

/** `uspark run … -- sh fake-agent.sh <how> -- <files>`. */
function runArgs(how: string, files: string[], ...extra: string[]): string[] {
  return [
    "run",
    "--project-id",
    "p1",
    "--api-url",
    t.server!.url,
    "--root",
    t.root,
    ...extra,
    "--",
    "sh",
    FAKE_AGENT,
    how,
    "--",
    ...files.map((f) => path.join(t.root, f)),
  ];
}

/** An executable shell script at `file` (the agents' stand-ins: a Node one costs each run another Node start). */
function script(file: string, lines: string[]): void {
  writeFileSync(file, ["#!/bin/sh", ...lines].join("\n") + "\n");
  chmodSync(file, 0o755);
}

describe("uspark run -- <agent>", () => {
  it("should pass the agent's stdout through byte for byte, sync its writes and exit 0", async () => {
    const result = await runCli(runArgs("0", ["a.txt", "b.txt"]));
    expect(result.code).toBe(0);
    const lines = result.stdout
      .subarray(0, result.stdout.length - 6)
      .toString()
      .split("\n")
      .filter(Boolean);
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(["assistant", "user", "assistant", "user"]);
    expect(result.stdout.subarray(-6)).toEqual(Buffer.from([0xff, 0xfe, 0x0d, 0x0a, 0x00, 0x41]));
    const remote = await remoteFiles(t.server!.url);
    expect(remote.get("a.txt")?.toString()).toBe(readFileSync(path.join(t.root, "a.txt"), "utf8"));
    expect(remote.has("b.txt")).toBe(true);
  });

  it("should pull the remote project with --pull before the agent starts", async () => {
    await commitFiles(t.server!.url, "p1", "", { "pulled.txt": "from the remote\n" });
    const result = await runCli(runArgs("0", ["a.txt"], "--pull"));
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(path.join(t.root, "pulled.txt"), "utf8")).toBe("from the remote\n");
    expect((await remoteFiles(t.server!.url)).has("a.txt")).toBe(true);
  });

  it("should write nothing with --pull --dry-run: the pull is a dry run too", async () => {
    await commitFiles(t.server!.url, "p1", "", { "pulled.txt": "from the remote\n" });
    const result = await runCli(runArgs("0", ["a.txt"], "--pull", "--dry-run"));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/would pull pulled\.txt/);
    expect(existsSync(path.join(t.root, "pulled.txt"))).toBe(false);
    expect(existsSync(path.join(t.root, ".uspark", "state.json"))).toBe(false);
  });

  it("should not start the agent when --pull finds a conflict, and exit 1", async () => {
    await commitFiles(t.server!.url, "p1", "", { "a.txt": "remote\n" });
    writeFileSync(path.join(t.root, "a.txt"), "local, never pulled\n");
    const result = await runCli(runArgs("0", ["a.txt"], "--pull"));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the agent was not started/);
    expect(readFileSync(path.join(t.root, "a.txt"), "utf8")).toBe("local, never pulled\n");
  });

  it("should name the run as the commits' agent when the command's output names none (a plain script)", async () => {
    mkdirSync(path.join(t.root, "bin"));
    const agent = path.join(t.root, "bin", "plain-agent.sh");
    script(agent, [`echo "no JSON here"`, `echo written > '${path.join(t.root, "plain.txt")}'`]);
    const result = await runCli([
      "run",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--ignore",
      "bin/",
      "--",
      agent,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const commits = await remoteCommits(t.server!.url);
    expect(commits.length).toBeGreaterThan(0);
    expect(commits.map((commit) => commit.source?.agent)).toEqual(commits.map(() => "run"));
  });

  it("should exit with the agent's code 3 after syncing its writes", async () => {
    const result = await runCli(runArgs("3", ["a.txt"]));
    expect(result.code).toBe(3);
    expect((await remoteFiles(t.server!.url)).has("a.txt")).toBe(true);
  });

  it("should exit 130 and 143 when the agent died of SIGINT or SIGTERM", async () => {
    expect((await runCli(runArgs("SIGINT", ["a.txt"]))).code).toBe(130);
    expect((await runCli(runArgs("SIGTERM", ["b.txt"]))).code).toBe(143);
    expect([...(await remoteFiles(t.server!.url)).keys()].sort()).toEqual(["a.txt", "b.txt"]);
  });

  it("should pass SIGTERM on to the agent and sync the write of its SIGTERM handler", async () => {
    const { child, result } = await startCli(runArgs("on-SIGTERM", ["last.txt"]));
    await waitForOutput(child.stdout, (text) => text.includes("ready\n"));
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code).toBe(143);
    expect((await remoteFiles(t.server!.url)).get("last.txt")?.toString()).toBe(`last words ${path.join(t.root, "last.txt")}\n`);
  });

  it("should say a command that is not found in one line and exit 127", async () => {
    const result = await runCli([
      "run",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--",
      "no-such-agent-here",
      "-p",
    ]);
    expect(result.code).toBe(127);
    expect(result.stderr.trimEnd().split("\n")).toEqual(["uspark: error: command not found: no-such-agent-here"]);
  });

  it("should say a file that is not executable in one line, with the chmod that fixes it, and exit 126", async () => {
    const script = path.join(t.root, "agent.sh");
    writeFileSync(script, "echo hi\n", { mode: 0o644 });
    const result = await runCli(["run", "--project-id", "p1", "--api-url", t.server!.url, "--root", t.root, "--", script]);
    expect(result.code).toBe(126);
    expect(result.stderr.trimEnd().split("\n")).toEqual([
      `uspark: error: cannot start agent.sh: permission denied (not executable? chmod +x ${script})`,
    ]);
  });

  it("should say the agent's own failure reason on stderr when stdout is a pipe (CI): not only its exit code", async () => {
    const claude = path.join(t.root, "claude");
    // Claude Code not logged in: the reason is only in its final result event, on stdout.
    const result_ = { type: "result", subtype: "success", is_error: true, result: "Not logged in · Please run /login", session_id: "s" };
    script(claude, [
      `printf '%s\\n' '${JSON.stringify({ type: "system", subtype: "init", session_id: "s", tools: [] })}'`,
      `printf '%s\\n' '${JSON.stringify(result_)}'`,
      "exit 1",
    ]);
    const result = await runCli([
      "run",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--",
      claude,
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "hi",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout.toString()).toContain("Not logged in");
    expect(result.stderr).toContain("uspark: error: claude failed: Not logged in · Please run /login (exit code 1)");
    expect(result.stderr).not.toContain("exited with code 1");
  });

  it("should say only the exit code when the agent's output names no reason", async () => {
    const result = await runCli(runArgs("3", ["a.txt"]));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("sh exited with code 3");
  });

  it("should warn once when a known agent lacks its stream flag, never change its arguments, and still sync by the file watcher", async () => {
    // A `claude` that prints its arguments and writes a file, with no stream at all.
    const bin = path.join(t.root, "bin");
    const claude = path.join(bin, "claude");
    mkdirSync(bin);
    script(claude, [
      `printf 'by the shell\\n' > '${path.join(t.root, "out.txt")}'`,
      // Its arguments as a JSON array of strings (these need no escaping).
      'list=; sep=; for arg do list="$list$sep\\"$arg\\""; sep=,; done',
      `printf '[%s]\\n' "$list"`,
    ]);
    const result = await runCli([
      "run",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--ignore",
      "bin/",
      "--",
      claude,
      "fix",
      "the bug",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe('["fix","the bug"]\n');
    expect(result.stderr.match(/warning: claude was started without -p --output-format stream-json --verbose/g)).toHaveLength(1);
    expect((await remoteFiles(t.server!.url)).get("out.txt")?.toString()).toBe("by the shell\n");
  });

  it("should say once that auggie's output carries no file events, never take its Claude-shaped result line for Claude's stream, and sync by the file watcher", async () => {
    // An `auggie` that writes a file and prints, as `auggie --print --output-format json` does, one result line.
    const bin = path.join(t.root, "bin");
    const auggie = path.join(bin, "auggie");
    mkdirSync(bin);
    const line = {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Done.",
      session_id: "0b6d9c4e-1f2a-4b3c-8d4e-5f6a7b8c9d0e",
      num_turns: 2,
    };
    script(auggie, [`printf 'by auggie\\n' > '${path.join(t.root, "out.txt")}'`, `printf '%s\\n' '${JSON.stringify(line)}'`]);
    const result = await runCli([
      "run",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--ignore",
      "bin/",
      "--verbose",
      "--",
      auggie,
      "--print",
      "--output-format",
      "json",
      "fix it",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe(JSON.stringify(line) + "\n");
    expect(result.stderr.match(/auggie's output carries no file events: the file watcher syncs its changes/g)).toHaveLength(1);
    expect(result.stderr).not.toMatch(/detected the claude/);
    expect((await remoteFiles(t.server!.url)).get("out.txt")?.toString()).toBe("by auggie\n");
  });
});
