import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Reporter } from "../../src/report/reporter.js";
import { baseIn, emptyBase, lastProject, mergeBase, parseState, withBase, type Base } from "../../src/reconcile/base.js";
import { BaseKeeper, FileSystemMarks, statMatches } from "../../src/reconcile/base-keeper.js";
import { fileStateStore, statePath, type Intent, type StateStore } from "../../src/reconcile/state-store.js";

const API = "http://127.0.0.1:4400";
const SHA = "ab".repeat(32);
const entry = { sha256: SHA, size: 3, mtimeMs: 1000, ino: 7 };
const base = (projectId: string, files: Record<string, typeof entry>, extra: Partial<Base> = {}): Base => ({
  ...emptyBase({ apiUrl: API, projectId }),
  files: new Map(Object.entries(files)),
  ...extra,
});

describe("state file contents", () => {
  it("keeps other projects when one project's base is replaced; the newest is the remembered one", () => {
    const now = new Date("2026-11-25T10:00:00Z");
    const one = withBase(undefined, base("a", { x: entry }), now);
    const two = withBase(one, { ...base("b", { y: entry }), apiUrl: `${API}/` }, new Date(now.getTime() + 1000));
    const three = withBase(two, base("a", { z: entry }, { version: 4 }), new Date(now.getTime() + 2000));
    expect(baseIn(three, { apiUrl: API, projectId: "a" })?.files).toEqual(new Map([["z", entry]]));
    expect(baseIn(three, { apiUrl: `${API}/`, projectId: "b" })?.files).toEqual(new Map([["y", entry]]));
    expect(baseIn(three, { apiUrl: "http://other:1", projectId: "a" })).toBeUndefined();
    expect(lastProject(three)).toEqual({ apiUrl: API, projectId: "a", prefix: "" });
  });

  it("keeps open conflicts and held deletes", () => {
    const conflict = { local: SHA, remote: null, copy: "a.conflict-x.txt", copySha: SHA, at: "2026-11-25T10:00:00.000Z" };
    const state = parseState(
      JSON.stringify(
        withBase(undefined, base("p", {}, { conflicts: new Map([["a.txt", conflict]]), held: new Set(["gone.txt"]) }), new Date()),
      ),
    );
    const read = baseIn(state, { apiUrl: API, projectId: "p" })!;
    expect(read.conflicts.get("a.txt")).toEqual(conflict);
    expect([...read.held]).toEqual(["gone.txt"]);
  });

  it("reads a v0.2 state file (format 1): every hash kept, no stat trusted", () => {
    const v1 = JSON.stringify({
      format: 1,
      projects: [{ apiUrl: API, projectId: "p", version: 3, updatedAt: "2026-01-01T00:00:00Z", files: { "a.txt": SHA } }],
    });
    const read = baseIn(parseState(v1), { apiUrl: API, projectId: "p", prefix: "sub" })!;
    expect(read.files.get("a.txt")).toEqual({ sha256: SHA, size: -1, mtimeMs: -1, ino: -1 });
    expect(statMatches(read.files.get("a.txt"), { size: -1, mtimeMs: -1, ino: -1 })).toBe(false);
  });

  it.each([
    ["not JSON", "{"],
    ["an array", "[]"],
    ["a foreign format", JSON.stringify({ format: 99, projects: [] })],
    ["a project without files", JSON.stringify({ format: 2, projects: [{ apiUrl: API, projectId: "a", version: 1 }] })],
    [
      "an entry that is not [sha, size, mtime, ino]",
      JSON.stringify({ format: 2, projects: [{ apiUrl: API, projectId: "a", version: 1, files: { x: [SHA, 1] } }] }),
    ],
  ])("rejects %s", (_, text) => {
    expect(() => parseState(text)).toThrow();
  });
});

describe("the stat rules of the base", () => {
  it("trusts a stat only when size, mtime and inode are all the same", () => {
    expect(statMatches(entry, { size: 3, mtimeMs: 1000, ino: 7 })).toBe(true);
    expect(statMatches(entry, { size: 4, mtimeMs: 1000, ino: 7 })).toBe(false);
    expect(statMatches(entry, { size: 3, mtimeMs: 1001, ino: 7 })).toBe(false);
    expect(statMatches(entry, { size: 3, mtimeMs: 1000, ino: 8 })).toBe(false);
  });

  it("matches only the whole stat git keeps: a rewrite in place at the same size and mtime changes the ctime", () => {
    const full = { ...entry, ctimeMs: 1500.25, dev: 2049, mode: 0o100644 };
    expect(statMatches(full, { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 1500.25, dev: 2049, mode: 0o100644 }, 2000)).toBe(true);
    expect(statMatches(full, { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 1500.5, dev: 2049, mode: 0o100644 }, 2000)).toBe(false);
    expect(statMatches(full, { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 1500.25, dev: 2050, mode: 0o100644 }, 2000)).toBe(false);
    expect(statMatches(full, { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 1500.25, dev: 2049, mode: 0o100755 }, 2000)).toBe(false);
    // An entry of an older state file (no ctime) is hashed once, then kept whole.
    expect(statMatches(entry, { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 1500.25, dev: 2049, mode: 0o100644 }, 2000)).toBe(false);
    const state = withBase(undefined, base("p", { a: full }), new Date());
    expect(baseIn(parseState(JSON.stringify(state)), { apiUrl: API, projectId: "p" })?.files.get("a")).toEqual(full);
  });

  it("does not trust an mtime not older than the state file it was loaded with", () => {
    expect(statMatches(entry, { size: 3, mtimeMs: 1000, ino: 7 }, 1000)).toBe(false);
    expect(statMatches(entry, { size: 3, mtimeMs: 1000, ino: 7 }, 1001)).toBe(true);
  });

  it("trusts a stat read after a save whose state file is newer, on the file system's clock alone", () => {
    const stat = { size: 3, mtimeMs: 50_000, ino: 7 };
    const marks = new FileSystemMarks();
    // No mark yet: whatever our clock says, the tick of that mtime may still be running.
    expect(marks.trusts(stat, 10_000_000)).toBe(false);
    // Saved at 2,000 on our clock, the state file's mtime 60,000: our clock is far behind.
    marks.add(2000, 60_000);
    expect(marks.trusts(stat, 1999)).toBe(false);
    expect(marks.trusts(stat, 2000)).toBe(true);
    expect(marks.trusts({ ...stat, mtimeMs: 60_000 }, 3000)).toBe(false);
    expect(new FileSystemMarks(50_001).trusts(stat, 0)).toBe(true);
  });
});

describe("state file on disk", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "uspark-base-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const quiet = new Reporter({ stream: { write: () => true } });

  it("round-trips a base through the keeper, with the state file's mtime as the racy limit", async () => {
    const store = fileStateStore(root);
    const keeper = await BaseKeeper.load({ apiUrl: API, projectId: "p" }, { store, report: quiet });
    keeper.settle("src/a.ts", SHA, { size: 3, mtimeMs: 1000, ino: 7 });
    keeper.reachVersion(7);
    await keeper.close();
    const again = await store.load({ apiUrl: API, projectId: "p" });
    expect(again?.version).toBe(7);
    // Read before any state file was written: no mark of the file system's clock to trust it by.
    expect(again?.files.get("src/a.ts")).toEqual({ ...entry, mtimeMs: -1 });
    expect(again?.savedMtimeMs).toBeGreaterThan(1000);
    const next = await BaseKeeper.load({ apiUrl: API, projectId: "p" }, { store, report: quiet });
    next.settle("src/a.ts", SHA, { size: 3, mtimeMs: 1000, ino: 7 });
    expect(next.entry("src/a.ts")).toEqual(entry);
  });

  it("leaves out an intent file that is not one, and the keeper still starts: a null change, a bad hash, a bad base", async () => {
    const key = { apiUrl: API, projectId: "p" };
    // An intent of a process that is gone (pid 2^22 + 1 is past Linux's pid_max), else well-formed.
    const good = {
      key: "k-good",
      project: key,
      source: { agent: "push" },
      changes: [{ op: "put", path: "a.txt", sha256: SHA, size: 3, expect: null }],
      copies: [],
      bases: { "a.txt": null },
      owner: { pid: 4194305, boot: "" },
    };
    const bad = {
      "k-null": { ...good, key: "k-null", changes: [null] },
      "k-hash": { ...good, key: "k-hash", changes: [{ op: "put", path: "a.txt", sha256: "not-a-hash", size: 3 }] },
      "k-base": { ...good, key: "k-base", bases: { "a.txt": 7 } },
      "k-copies": { ...good, key: "k-copies", copies: [null] },
    };
    await mkdir(path.join(root, ".uspark"));
    for (const intent of [good, ...Object.values(bad)])
      await writeFile(path.join(root, ".uspark", `intent-${intent.key}.json`), JSON.stringify(intent));
    expect((await fileStateStore(root).openIntents(key)).map((intent) => intent.key)).toEqual(["k-good"]);
    const keeper = await BaseKeeper.load(key, { store: fileStateStore(root), report: quiet });
    expect(keeper.openIntents.map((intent) => intent.key)).toEqual(["k-good"]);
  });

  it("reads a corrupt state file as no base, with one warning", async () => {
    await mkdir(path.join(root, ".uspark"));
    await writeFile(statePath(root), "garbage");
    const lines: string[] = [];
    const report = new Reporter({ stream: { write: (t: string) => lines.push(t) } });
    expect(await fileStateStore(root, report).load({ apiUrl: API, projectId: "p" })).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("starting without a base");
  });
});

describe("commits sent and never answered", () => {
  const quiet = new Reporter({ stream: { write: () => true } });
  /** A store kept through the file format, as a restart reads it; every intent counts as an earlier process's. */
  const store = () => {
    const intents = new Map<string, Intent>();
    const s: StateStore & { saved?: Base; intents: Map<string, Intent> } = {
      intents,
      load: async (key) => s.saved && baseIn(withBase(undefined, s.saved, new Date()), key),
      save: async (b, paths) => void (s.saved = mergeBase(s.saved, b, paths)),
      writeIntent: async (intent) => void intents.set(intent.key, intent),
      removeIntent: async (key) => void intents.delete(key),
      openIntents: async () => [...intents.values()],
    };
    return s;
  };
  const NEW = "b".repeat(64);
  const KEY = { apiUrl: API, projectId: "p" };
  const sent = (key: string) => ({
    key,
    source: { agent: "test" },
    copies: [],
    changes: [
      { op: "put" as const, path: "a.txt", sha256: NEW, size: 1, expect: SHA },
      { op: "delete" as const, path: "gone.txt", expect: null },
    ],
  });

  it("count as the base once the remote shows what they sent, across a restart; an answer forgets them", async () => {
    const st = store();
    const keeper = await BaseKeeper.load(KEY, { store: st, report: quiet });
    keeper.settle("a.txt", SHA);
    await keeper.sending(sent("k1"));
    expect([...st.intents.keys()]).toEqual(["k1"]); // durable before the commit goes
    await keeper.close();
    const again = await BaseKeeper.load(KEY, { store: st, report: quiet });
    expect(again.baseFor("a.txt", NEW)).toBe(NEW); // it went through: our own commit, no conflict
    expect(again.baseFor("a.txt", "c".repeat(64))).toBe(SHA); // someone else's: the base as it was
    expect(again.baseFor("gone.txt", null)).toBe(null);
    again.settleIntent(again.openIntents[0]!, false);
    expect(again.baseFor("a.txt", NEW)).toBe(SHA);
    await again.close();
    expect(st.intents.size).toBe(0);
  });

  it("a refused commit sent again under its key (after uploading what was missing) keeps its intent, even behind a slow save", async () => {
    const st = store();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const save = st.save;
    st.save = async (b, paths) => (await gate, save(b, paths));
    const keeper = await BaseKeeper.load(KEY, { store: st, report: quiet });
    keeper.settle("a.txt", SHA);
    await keeper.sending(sent("k1"));
    const saving = keeper.close(); // a save under way (another process holds the state file's lock)
    keeper.answered("k1", ["a.txt", "gone.txt"], false); // 422 missing_blobs: nothing applied
    await keeper.sending(sent("k1")); // the blobs uploaded, the same commit again
    release();
    await saving;
    await keeper.close();
    expect([...st.intents.keys()]).toEqual(["k1"]); // in flight: a crash now must still find it
  });

  it("a replay's answer is the base where the base had not moved since; the intent goes once that is saved", async () => {
    const st = store();
    const keeper = await BaseKeeper.load(KEY, { store: st, report: quiet });
    keeper.settle("a.txt", SHA);
    await keeper.sending(sent("k1"));
    await keeper.close();
    const again = await BaseKeeper.load(KEY, { store: st, report: quiet });
    again.settleIntent(again.openIntents[0]!, true);
    expect(again.sha("a.txt")).toBe(NEW);
    expect(st.intents.size).toBe(1);
    await again.close();
    expect(st.intents.size).toBe(0);
    expect(st.saved?.files.get("a.txt")?.sha256).toBe(NEW);
    // An intent whose path moved on since (a later commit of ours was saved) leaves the base alone.
    const later = await BaseKeeper.load(KEY, { store: st, report: quiet });
    later.settleIntent({ ...sent("k0"), project: KEY, bases: { "a.txt": SHA, "gone.txt": null } }, true);
    expect(later.sha("a.txt")).toBe(NEW);
  });
});

describe("two processes on one state file", () => {
  it("each save merges its own paths: neither drops the other's entries", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "uspark-base-"));
    try {
      const quiet = new Reporter({ stream: { write: () => true } });
      const key = { apiUrl: API, projectId: "p" };
      const one = await BaseKeeper.load(key, { store: fileStateStore(root), report: quiet });
      const two = await BaseKeeper.load(key, { store: fileStateStore(root), report: quiet });
      one.settle("a.txt", SHA);
      two.settle("b.txt", SHA);
      two.reachVersion(3);
      await two.close();
      await one.close();
      const stored = await fileStateStore(root).load(key);
      expect([...stored!.files.keys()].sort()).toEqual(["a.txt", "b.txt"]);
      expect(stored!.version).toBe(3);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
