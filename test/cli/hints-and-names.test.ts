import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { perTest, UNREACHABLE } from "./helpers.js";

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
  it("pull takes --flush-timeout, as push and watch do; --timeout stays its older name", async () => {
    for (const flag of ["--flush-timeout", "--timeout"]) {
      const started = Date.now();
      const pull = await runCli(["pull", "--project-id", "p", "--api-url", UNREACHABLE, "--root", t.root, flag, "300"], { timeoutMs: 15_000 });
      expect(pull.stderr).not.toMatch(/unknown option/);
      expect(pull.code, pull.stderr).toBe(1);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });
});
