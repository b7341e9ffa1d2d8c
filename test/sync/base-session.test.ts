import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BaseKeeper } from "../../src/sync/base-keeper.js";
import { loadBase, statePath } from "../../src/sync/base.js";
import { createSyncSession, type SyncOptions } from "../../src/sync/index.js";
import { remoteFiles, remoteVersion, sha256, syncOptions, tempDir, useTestProject, waitFor } from "./helpers.js";

const TOKEN = "tok-base-0123456789";
const project = useTestProject({ token: TOKEN });

const target = (dir: string, rel: string) => ({ remote: rel, abs: path.join(dir, rel), cause: "Write" });
const options = (dir: string, extra: Partial<SyncOptions> = {}) => syncOptions(dir, project.server.url, project.log.reporter, { token: TOKEN, ...extra });

describe("the base follows the session's commits", () => {
  it("records every acknowledged put and delete, with the version, and never the token", async () => {
    await writeFile(path.join(project.root, "a.txt"), "a");
    await writeFile(path.join(project.root, "b.txt"), "b");
    const first = createSyncSession(options(project.root));
    first.add(target(project.root, "a.txt"));
    first.add(target(project.root, "b.txt"));
    await first.finish(10_000);
    expect(await loadBase(project.root, project.server.url, "p1")).toEqual({
      version: 1,
      files: new Map([["a.txt", sha256("a")], ["b.txt", sha256("b")]]),
      partial: true,
      savedAt: expect.any(Number),
    });

    await rm(path.join(project.root, "b.txt"));
    const second = createSyncSession(options(project.root));
    second.add(target(project.root, "b.txt"));
    await second.finish(10_000);
    const base = await loadBase(project.root, project.server.url, "p1");
    expect(base?.version).toBe(2);
    expect(base?.files).toEqual(new Map([["a.txt", sha256("a")]]));
    expect(await readFile(statePath(project.root), "utf8")).not.toContain(TOKEN);
  });

  it("writes state.json once for a burst of commits, and again only after the interval", async () => {
    const keeper = await BaseKeeper.load({ root: project.root, apiUrl: project.server.url, projectId: "p1", report: project.log.reporter, startedAt: Date.now(), saveEveryMs: 100 });
    for (let i = 0; i < 1000; i++) keeper.record([{ path: `f${i}`, sha256: sha256(String(i)) }], i + 1);
    await waitFor(() => keeper.saves === 1, 5000, "the coalesced write");
    keeper.record([{ path: "late", sha256: sha256("late") }], 1001);
    await keeper.close();
    expect(keeper.saves).toBe(2);
    const base = await loadBase(project.root, project.server.url, "p1");
    expect(base?.files.size).toBe(1001);
    expect(base?.version).toBe(1001);
  });
});

describe("the base is written only when it changes", () => {
  const keeperAt = (base: { version: number; files: [string, string][] } | undefined) =>
    BaseKeeper.load({ root: project.root, apiUrl: project.server.url, projectId: "p1", report: project.log.reporter, startedAt: Date.now(), saveEveryMs: 10 }).then(async (keeper) => {
      if (base) {
        keeper.record(base.files.map(([p, sha]) => ({ path: p, sha256: sha })), base.version);
        await keeper.close();
        return BaseKeeper.load({ root: project.root, apiUrl: project.server.url, projectId: "p1", report: project.log.reporter, startedAt: Date.now(), saveEveryMs: 10 });
      }
      return keeper;
    });

  it("records the same hash, a delete of an absent path or an older version without a write", async () => {
    const keeper = await keeperAt({ version: 3, files: [["a", sha256("a")]] });
    keeper.record([{ path: "a", sha256: sha256("a") }, { path: "gone" }], 2);
    keeper.record([], 3);
    await keeper.close();
    expect(keeper.saves).toBe(0);
  });

  it.each([
    ["a new hash", [{ path: "a", sha256: sha256("a2") }], undefined],
    ["a new path", [{ path: "b", sha256: sha256("b") }], undefined],
    ["a delete", [{ path: "a" }], undefined],
    ["a newer version", [], 4],
  ])("writes it for %s", async (_, changes, version) => {
    const keeper = await keeperAt({ version: 3, files: [["a", sha256("a")]] });
    keeper.record(changes, version);
    await keeper.close();
    expect(keeper.saves).toBe(1);
  });

  it("leaves state.json alone when a second session finds every file unchanged", async () => {
    const names = ["a.txt", "b.txt", "c.txt"];
    for (const name of names) await writeFile(path.join(project.root, name), name);
    const first = createSyncSession(options(project.root));
    for (const name of names) first.add(target(project.root, name));
    expect(await first.finish(10_000)).toMatchObject({ commits: 1, pushed: names.length, failed: [] });
    const before = await stat(statePath(project.root));

    const second = createSyncSession(options(project.root));
    for (const name of names) second.add(target(project.root, name));
    expect(await second.finish(10_000)).toMatchObject({ commits: 0, unchanged: names.length, failed: [] });
    const after = await stat(statePath(project.root));
    // Written atomically (a new file renamed over the old one): the same inode and mtime mean no write.
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect((await second.base()).files.size).toBe(names.length);
  });
});

describe("two writers on one project", () => {
  /** Writer B changes `f` behind A's back, through its own session and tree. */
  async function otherWriterSets(content: string): Promise<void> {
    const other = await tempDir("uspark-other-");
    try {
      await writeFile(path.join(other.dir, "f.txt"), content);
      const b = createSyncSession(options(other.dir));
      b.add(target(other.dir, "f.txt"));
      expect((await b.finish(10_000)).failed).toEqual([]);
    } finally {
      await other.cleanup();
    }
  }

  it("a local write equal to A's stale picture is pushed, not skipped as unchanged", async () => {
    await writeFile(path.join(project.root, "f.txt"), "mine");
    const a = createSyncSession(options(project.root, { remoteMaxAgeMs: 0 }));
    a.add(target(project.root, "f.txt"));
    await waitFor(async () => (await remoteVersion(project.server.url, "p1", TOKEN)) === 1, 5000, "A's first commit");
    await otherWriterSets("theirs");
    a.add(target(project.root, "f.txt")); // the agent writes "mine" again
    const result = await a.finish(10_000);
    expect(result.failed).toEqual([]);
    expect((await remoteFiles(project.server.url, "p1", TOKEN)).get("f.txt")?.toString()).toBe("mine");
  });

  it("a commit answered with a version moved by more than one lists the project again", async () => {
    await writeFile(path.join(project.root, "f.txt"), "mine");
    await writeFile(path.join(project.root, "g.txt"), "g");
    const a = createSyncSession(options(project.root, { remoteMaxAgeMs: 3600_000 }));
    a.add(target(project.root, "f.txt"));
    await waitFor(async () => (await remoteVersion(project.server.url, "p1", TOKEN)) === 1, 5000, "A's first commit");
    await otherWriterSets("theirs");
    a.add(target(project.root, "g.txt")); // v3: B's commit came in between
    await waitFor(async () => (await remoteVersion(project.server.url, "p1", TOKEN)) === 3, 5000, "A's second commit");
    a.add(target(project.root, "f.txt"));
    await a.finish(10_000);
    expect((await remoteFiles(project.server.url, "p1", TOKEN)).get("f.txt")?.toString()).toBe("mine");
    expect(project.log.events("remote").some((r) => /another writer/.test(r.message))).toBe(true);
  });
});
