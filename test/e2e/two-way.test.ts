import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { remoteCommits, startProxy, tempDir, eventually, type Action, type SeenRequest } from "../kit/sync.js";

/**
 * The dev-container recipe: `uspark pull`, then `uspark watch --no-stdin --two-way`. Another
 * writer's commits are written here while the watch runs, and said on stderr as commits are
 * (before, a two-way watch wrote them without a word unless --verbose).
 */

const t = perTest("uspark-two-way-", { server: true });
let other: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  other = await tempDir("uspark-two-way-other-");
});
afterEach(() => other.cleanup());

const connection = () => ["--project-id", "p1", "--api-url", t.server!.url];
const pushFrom = async (root: string, ...extra: string[]) => {
  const pushed = await runCli(["push", ...connection(), "--root", root, ...extra]);
  expect(pushed.code, pushed.stderr).toBe(0);
};
const here = (name: string) => readFileSync(path.join(t.root, name), "utf8");

describe("uspark watch --no-stdin --two-way", () => {
  it("writes another writer's commits here as they land, a line a round; pushes none of it back; pushes its own edits", async () => {
    writeFileSync(path.join(other.dir, "a.txt"), "one\n");
    writeFileSync(path.join(other.dir, "gone.txt"), "soon deleted\n");
    await pushFrom(other.dir);
    expect((await runCli(["pull", ...connection(), "--root", t.root])).code).toBe(0);

    const { child, result } = await startCli(["watch", "--no-stdin", "--two-way", ...connection(), "--root", t.root, "--debounce", "50"]);
    await waitForOutput(child.stderr, (text) => text.includes("SIGINT or SIGTERM stops it"));
    writeFileSync(path.join(other.dir, "a.txt"), "two\n");
    writeFileSync(path.join(other.dir, "b.txt"), "new\n");
    rmSync(path.join(other.dir, "gone.txt"));
    await pushFrom(other.dir, "--delete");

    const said = await waitForOutput(child.stderr, (text) => text.includes("pulled v2"));
    expect(said).toMatch(/^[0-9TZ:.-]+ uspark: pulled v2: 3 files \((a\.txt, b\.txt|b\.txt, a\.txt), gone\.txt deleted\)$/m);
    expect([here("a.txt"), here("b.txt")]).toEqual(["two\n", "new\n"]);
    expect(() => here("gone.txt")).toThrow(/ENOENT/);

    writeFileSync(path.join(t.root, "mine.txt"), "from the container\n");
    await eventually(async () => (await remoteCommits(t.server!.url)).length === 3, 10_000, "the watch's commit of mine.txt");
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/^[0-9TZ:.-]+ uspark: committed v3: 1 file \(mine\.txt\)$/m);
    expect(done.stderr.match(/pulled v\d/g)).toEqual(["pulled v2"]); // said once; and nothing pulled was committed back
    expect((await remoteCommits(t.server!.url)).map((commit) => commit.version)).toEqual([1, 2, 3]);
  });

  it("in a JSON log: a 'pulled' record with the version, the files written and the files deleted", async () => {
    writeFileSync(path.join(other.dir, "gone.txt"), "soon deleted\n");
    await pushFrom(other.dir);
    expect((await runCli(["pull", ...connection(), "--root", t.root])).code).toBe(0);
    const { child, result } = await startCli([
      "watch",
      "--no-stdin",
      "--two-way",
      ...connection(),
      "--root",
      t.root,
      "--debounce",
      "50",
      "--log-format",
      "json",
    ]);
    await waitForOutput(child.stderr, (text) => text.includes("SIGINT or SIGTERM stops it"));
    // Listening before the push: the watch may pull and say so before the push command returns.
    const pulled = waitForOutput(child.stderr, (text) => text.includes('"event":"pulled"'), 30_000);
    rmSync(path.join(other.dir, "gone.txt"));
    writeFileSync(path.join(other.dir, "c.txt"), "c\n");
    await pushFrom(other.dir, "--delete");
    const said = await pulled;
    const record = said
      .split("\n")
      .filter((line) => line.includes('"event":"pulled"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)[0]!;
    expect(record).toMatchObject({ level: "info", event: "pulled", version: 2, files: ["c.txt"], deleted: ["gone.txt"] });
    child.kill("SIGTERM");
    expect((await result).code).toBe(0);
  });

  /**
   * A server that contradicts itself (docs/api.md, GET /commits): its feed answers, for the version
   * it already gave (v2), a head that went back or commits that do not follow. No retry can mend
   * that: the watch stops, exit 1, with one line naming both versions (the summary repeats it;
   * before: a warning every second, forever).
   */
  const goesBack: [string, unknown, RegExp][] = [
    ["a head older than a version it gave", { version: 1, commits: [] }, /\bv2\b.*\bv1\b/],
    ["commits that do not follow", { version: 5, commits: [{ version: 5, time: "", changes: [] }] }, /\bv5\b.*\bv3\b/],
  ];
  for (const [what, answer, versions] of goesBack) {
    it(`stops on a commit feed that goes back (${what}): exit 1, one line naming both versions`, async () => {
      writeFileSync(path.join(other.dir, "a.txt"), "one\n");
      await pushFrom(other.dir);
      writeFileSync(path.join(other.dir, "a.txt"), "two\n");
      await pushFrom(other.dir);
      const feedAfterV2 = (req: SeenRequest): Action | undefined =>
        req.method === "GET" && /\/commits\?(.*&)?since=2\b/.test(req.url) ? { kind: "answer", status: 200, body: answer } : undefined;
      const proxy = await startProxy(t.server!.url, feedAfterV2);
      try {
        const via = ["--project-id", "p1", "--api-url", proxy.url, "--root", t.root];
        expect((await runCli(["pull", ...via])).code).toBe(0);
        const done = await runCli(["watch", "--no-stdin", "--two-way", ...via], { timeoutMs: 15_000 });
        expect(done.code, done.stderr).toBe(1);
        const said = done.stderr.split("\n").filter((line) => /contradicts itself.*Syncing is stopped/.test(line));
        expect(said, done.stderr).toHaveLength(1);
        expect(said[0]).toMatch(versions);
        expect(done.stderr).not.toMatch(/trying again/);
        expect(here("a.txt")).toBe("two\n");
      } finally {
        await proxy.close();
      }
    });
  }
});
