import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { remoteFiles, remoteVersion } from "../kit/sync.js";

/**
 * A `push --delete` refused by the mass-delete guard commits nothing at all (docs/sync.md#mass-deletes; issue
 * 22: it still pushed the rest, a half-done push), says so and exits 1.
 */
const t = perTest("uspark-push-all-", { server: true });

describe("push --delete refused by the mass-delete guard", () => {
  it("should commit nothing at all, neither the deletes nor the other changes, and exit 1", async () => {
    const connection = ["--project-id", "p1", "--api-url", t.server!.url, "--root", t.root];
    for (let i = 0; i < 20; i++) writeFileSync(path.join(t.root, `f${i}.txt`), `file ${i}\n`);
    expect((await runCli(["push", ...connection])).code).toBe(0);
    const before = await remoteVersion(t.server!.url);
    for (let i = 0; i < 15; i++) rmSync(path.join(t.root, `f${i}.txt`));
    writeFileSync(path.join(t.root, "f19.txt"), "edited\n");
    writeFileSync(path.join(t.root, "new.txt"), "new\n");
    const result = await runCli(["push", "--delete", ...connection]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/nothing was committed/);
    expect(await remoteVersion(t.server!.url)).toBe(before);
    const remote = await remoteFiles(t.server!.url);
    expect(remote.size).toBe(20);
    expect(remote.get("f19.txt")?.toString()).toBe("file 19\n");
    expect(remote.has("new.txt")).toBe(false);
  });
});
