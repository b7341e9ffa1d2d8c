import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A SIGTERM ends the session within the flush timeout whatever the tree (issue 22: "a SIGTERM
 * does not cut a scan short"): the scans of a deep tree are cut short at the flush timeout.
 */
const t = perTest("uspark-deep-tree-", { server: true });

describe("SIGTERM while a deep tree is scanned", () => {
  it("should end the daemon within the flush timeout", async () => {
    let dir = t.root;
    for (let level = 0; level < 1000; level++) {
      writeFileSync(path.join(dir, "a.txt"), `level ${level}\n`);
      dir = path.join(dir, "d");
      mkdirSync(dir);
    }
    const flushTimeoutMs = 500;
    const args = [
      "watch",
      "--no-stdin",
      "--project-id",
      "p1",
      "--api-url",
      t.server!.url,
      "--root",
      t.root,
      "--flush-timeout",
      String(flushTimeoutMs),
      "--verbose",
    ];
    const { child, result } = await startCli(args, { timeoutMs: 30_000 });
    await waitForOutput(child.stderr, (text) => /project is at v\d+/.test(text), 10_000);
    const signalled = Date.now();
    child.kill("SIGTERM");
    const done = await result;
    expect(Date.now() - signalled).toBeLessThan(flushTimeoutMs + 5000);
    expect([0, 1]).toContain(done.code);
  });
});
