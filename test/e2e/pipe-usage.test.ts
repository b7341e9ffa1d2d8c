import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli } from "../kit/cli.js";
import { perTest, writeEvents } from "../kit/fixtures.js";

/**
 * The pipe form never harms the agent upstream (docs/commands.md#the-pipe-form): on a usage or configuration error
 * it still copies stdin to stdout to the end, then exits 2, so the agent is not killed by SIGPIPE
 * and its output is not lost. A stream with no JSON event gets one warning naming the stream flag.
 */
const t = perTest("uspark-pipe-usage-");

/** More than a pipe's buffer holds, so that an early exit cannot hide in it; no JSON in it. */
const BIG = Buffer.from(
  Array.from({ length: 40_000 }, (_, i) => `plain line ${i} of an agent run without its stream flag`).join("\n") + "\n",
);

describe("the pipe form on a usage or configuration error", () => {
  it("should copy all of stdin to stdout, then exit 2, when the configuration is bad", async () => {
    const result = await runCli(["watch", "--project-id", "p1", "--api-url", "ftp://example.com", "--root", t.root], { input: BIG });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error: .*ftp/);
    expect(result.stdout.equals(BIG)).toBe(true);
  });

  it("should copy all of stdin to stdout, then exit 2, on an unknown flag", async () => {
    const result = await runCli(["watch-claude", "--no-such-flag", "--root", t.root], { input: BIG });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no-such-flag/);
    expect(result.stdout.equals(BIG)).toBe(true);
  });

  it("should print only its help with --help, not the stream it was given", async () => {
    const result = await runCli(["watch-claude", "--help"], { input: BIG });
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toMatch(/^Usage: uspark watch-claude/);
    expect(result.stdout.includes("plain line 0")).toBe(false);
  });

  it("should exit 2 at once, reading nothing, when it reads no stdin (--no-stdin)", async () => {
    const { child, result } = await startCli(["watch", "--no-stdin", "--no-such-flag", "--root", t.root], { timeoutMs: 5000 });
    const done = await result;
    child.stdin.destroy();
    expect(done.code).toBe(2);
    expect(done.stdout.length).toBe(0);
  });
});

describe("a stream with no JSON event", () => {
  it("should warn once, naming the agent's stream flag, and pass the stream through unchanged", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--root", t.root], { input: BIG });
    expect(result.code).toBe(0);
    expect(result.stdout.equals(BIG)).toBe(true);
    expect(result.stderr.match(/warning: .*no JSON/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/-p --output-format stream-json --verbose/);
  });

  it("should warn at the end of a short stream too", async () => {
    const result = await runCli(["watch", "--agent", "codex", "--dry-run", "--root", t.root], { input: "Done: I fixed the bug.\n" });
    expect(result.code).toBe(0);
    expect(result.stderr.match(/warning: .*no JSON/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/exec --json/);
  });

  it("should say with --no-fs-watch that none of the agent's changes is seen, not that the file watcher sees them", async () => {
    const result = await runCli(["watch-claude", "--dry-run", "--no-fs-watch", "--root", t.root], { input: "Done: I fixed the bug.\n" });
    expect(result.code).toBe(0);
    expect(result.stderr.match(/warning: .*no JSON/g)).toHaveLength(1);
    expect(result.stderr).toContain("With --no-fs-watch, none of its changes is seen");
    expect(result.stderr).not.toContain("Only the file watcher");
  });

  it("should not warn about a JSON stream, nor about an empty one", async () => {
    const json = await runCli(["watch", "--dry-run", "--root", t.root], {
      input: "banner text\n" + writeEvents(path.join(t.root, "a.txt")),
    });
    expect(json.stderr).not.toMatch(/no JSON/);
    const empty = await runCli(["watch", "--dry-run", "--root", t.root], { input: "" });
    expect(empty.stderr).not.toMatch(/no JSON/);
  });
});
