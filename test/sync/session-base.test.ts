import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BaseKeeper } from "../../src/reconcile/base-keeper.js";
import { fileStateStore, statePath } from "../../src/reconcile/state-store.js";
import { createSyncSession, type SyncOptions } from "../../src/sync/index.js";
import { remoteFiles, sha256, syncOptions, tempDir, useTestProject, eventually } from "../kit/sync.js";

/**
 * The base (.uspark/state.json) as sync sessions leave it (docs/sync.md#the-base: it moves only when
 * both sides are equal).
 */

const TOKEN = "tok-base-0123456789";
const project = useTestProject({ token: TOKEN });

const target = (rel: string) => ({ remote: rel, cause: "Write" });
const options = (dir: string, extra: Partial<SyncOptions> = {}) =>
  syncOptions(dir, project.server.url, project.log.reporter, { token: TOKEN, ...extra });
const loadBase = (dir: string) => fileStateStore(dir).load({ apiUrl: project.server.url, projectId: "p1" });
const hashes = (files: Map<string, { sha256: string }> | undefined) => new Map([...(files ?? [])].map(([p, e]) => [p, e.sha256]));

describe("the base follows the session's commits", () => {
  it("records every acknowledged put and delete, with the version, and never the token", async () => {
    await writeFile(path.join(project.root, "a.txt"), "a");
    await writeFile(path.join(project.root, "b.txt"), "b");
    const first = createSyncSession(options(project.root));
    first.add(target("a.txt"));
    first.add(target("b.txt"));
    await first.finish(10_000);
    const base = await loadBase(project.root);
    expect(base?.version).toBe(1);
    expect(hashes(base?.files)).toEqual(
      new Map([
        ["a.txt", sha256("a")],
        ["b.txt", sha256("b")],
      ]),
    );

    await rm(path.join(project.root, "b.txt"));
    const second = createSyncSession(options(project.root));
    second.add({ remote: "b.txt", cause: "Delete" });
    await second.finish(10_000);
    const after = await loadBase(project.root);
    expect(after?.version).toBe(2);
    expect(hashes(after?.files)).toEqual(new Map([["a.txt", sha256("a")]]));
    expect(await readFile(statePath(project.root), "utf8")).not.toContain(TOKEN);
  });

  it("writes state.json once for a burst of changes, and again only after the interval", async () => {
    const keeper = await BaseKeeper.load(
      { apiUrl: project.server.url, projectId: "p1" },
      { store: fileStateStore(project.root), report: project.log.reporter, saveEveryMs: 100 },
    );
    for (let i = 0; i < 1000; i++) (keeper.settle(`f${i}`, sha256(String(i))), keeper.reachVersion(i + 1));
    await eventually(() => keeper.saves === 1, 5000, "the coalesced write");
    keeper.settle("late", sha256("late"));
    await keeper.close();
    expect(keeper.saves).toBe(2);
    const base = await loadBase(project.root);
    expect(base?.files.size).toBe(1001);
    expect(base?.version).toBe(1000);
  });
});

describe("the base is written only when it changes", () => {
  const keeper = () =>
    BaseKeeper.load(
      { apiUrl: project.server.url, projectId: "p1" },
      { store: fileStateStore(project.root), report: project.log.reporter, saveEveryMs: 10 },
    );
  async function keeperAt(version: number, files: [string, string][]) {
    const first = await keeper();
    for (const [p, sha] of files) first.settle(p, sha);
    first.reachVersion(version);
    await first.close();
    return keeper();
  }

  it("settling the same hash, a delete of an absent path or an older version writes nothing", async () => {
    const k = await keeperAt(3, [["a", sha256("a")]]);
    k.settle("a", sha256("a"));
    k.settle("gone", null);
    k.reachVersion(2);
    await k.close();
    expect(k.saves).toBe(0);
  });

  it.each([
    ["a new hash", (k: BaseKeeper) => k.settle("a", sha256("a2"))],
    ["a new path", (k: BaseKeeper) => k.settle("b", sha256("b"))],
    ["a delete", (k: BaseKeeper) => k.settle("a", null)],
    ["a newer version", (k: BaseKeeper) => k.reachVersion(4)],
    ["a held delete", (k: BaseKeeper) => k.hold(["a"])],
  ])("writes it for %s", async (_, change) => {
    const k = await keeperAt(3, [["a", sha256("a")]]);
    change(k);
    await k.close();
    expect(k.saves).toBe(1);
  });

  it("leaves state.json alone when a second session finds every file unchanged", async () => {
    const names = ["a.txt", "b.txt", "c.txt"];
    for (const name of names) await writeFile(path.join(project.root, name), name);
    const first = createSyncSession(options(project.root));
    for (const name of names) first.add(target(name));
    expect(await first.finish(10_000)).toMatchObject({ commits: 1, pushed: names.length, failed: [] });
    // A second session at least RACY_MS later would trust the stats; here it hashes them and finds them equal.
    const second = createSyncSession(options(project.root));
    const before = await stat(statePath(project.root));
    for (const name of names) second.add(target(name));
    expect(await second.finish(10_000)).toMatchObject({ commits: 0, unchanged: names.length, failed: [] });
    expect((await remoteFiles(project.server.url, "p1", TOKEN)).size).toBe(names.length);
    const after = await stat(statePath(project.root));
    expect(after.mtimeMs).toBeGreaterThanOrEqual(before.mtimeMs);
  });
});

describe("two writers on one project", () => {
  /** Writer B, whose tree held what the remote holds, changes `f` behind A's back through its own session. */
  async function otherWriterChanges(from: string, to: string): Promise<void> {
    const other = await tempDir("uspark-other-");
    try {
      for (const content of [from, to]) {
        await writeFile(path.join(other.dir, "f.txt"), content);
        const b = createSyncSession(options(other.dir));
        b.add(target("f.txt"));
        await b.finish(10_000);
      }
    } finally {
      await other.cleanup();
    }
  }

  it("an edit on both sides keeps both: the remote keeps theirs, mine goes to a conflict copy, said once", async () => {
    await writeFile(path.join(project.root, "f.txt"), "v1");
    const a = createSyncSession(options(project.root));
    a.add(target("f.txt"));
    expect(await a.finish(10_000)).toMatchObject({ commits: 1 });
    await otherWriterChanges("v1", "theirs");
    await writeFile(path.join(project.root, "f.txt"), "mine");
    const again = createSyncSession(options(project.root));
    again.add(target("f.txt"));
    const result = await again.finish(10_000);
    const remote = await remoteFiles(project.server.url, "p1", TOKEN);
    expect(remote.get("f.txt")?.toString()).toBe("theirs");
    const copies = [...remote.keys()].filter((p) => p.startsWith("f.conflict-"));
    expect(copies).toHaveLength(1);
    expect(remote.get(copies[0]!)?.toString()).toBe("mine");
    expect(await readFile(path.join(project.root, "f.txt"), "utf8")).toBe("mine");
    expect(project.log.events("conflict")).toHaveLength(1);
    expect(result.conflicts.map((c) => c.remote)).toEqual(["f.txt"]);
  });
});
