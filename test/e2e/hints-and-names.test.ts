import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { perTest, UNREACHABLE } from "../kit/fixtures.js";

/** Issue 20's smaller things, through the built CLI: hints that can help, one name per idea. */

const t = perTest("uspark-cli-hints-", { server: true });

describe("hints that can help", () => {
  it("a file over --max-file-size: the hint is to raise it or --ignore the file, never push --pending, and nothing is journaled", async () => {
    writeFileSync(path.join(t.root, "big.bin"), Buffer.alloc(100));
    writeFileSync(path.join(t.root, "small.txt"), "s\n");
    const args = ["--project-id", "p", "--api-url", t.server!.url, "--root", t.root, "--max-file-size", "10"];
    const watch = await runCli(["watch", ...args], { input: "" });
    expect(watch.code).toBe(1);
    expect(watch.stderr).toMatch(/big\.bin/);
    expect(watch.stderr).not.toContain("push --pending");
    expect(watch.stderr).toContain("raise --max-file-size or --ignore it");
    expect(existsSync(path.join(t.root, ".uspark", "pending.json"))).toBe(false);
    const push = await runCli(["push", ...args]);
    expect(push.code).toBe(1);
    expect(push.stderr).toContain("raise --max-file-size or --ignore it");
    expect(push.stderr).not.toContain("push --pending");
  });
});

describe("one name per idea", () => {
  it("--timeout is the one name of the server-silence limit, on every command; --flush-timeout stays its older name for push, pull and the watchers", async () => {
    const runs: [string, string[]][] = [
      ["pull --timeout", ["pull", "--timeout", "300"]],
      ["pull --flush-timeout", ["pull", "--flush-timeout", "300"]],
      ["push --timeout", ["push", "--timeout", "300"]],
      ["status --timeout", ["status", "--timeout", "300"]],
      ["resolve --timeout", ["resolve", "x.txt", "--mine", "--timeout", "300"]],
    ];
    for (const [name, args] of runs) {
      const started = Date.now();
      const result = await runCli([...args, "--project-id", "p", "--api-url", UNREACHABLE, "--root", t.root], {
        cwd: t.root,
        timeoutMs: 15_000,
      });
      expect(result.stderr, name).not.toMatch(/unknown option/);
      expect(result.code, `${name}: ${result.stderr}`).toBe(1);
      expect(Date.now() - started, name).toBeLessThan(10_000);
    }
  });

  it("help names --timeout, never the older name", async () => {
    for (const command of ["push", "pull", "watch", "run", "status", "resolve"]) {
      const help = (await runCli([command, "--help"])).stdout.toString();
      expect(help, command).toMatch(/--timeout <ms>/);
      expect(help, command).not.toContain("--flush-timeout");
    }
  });
});
