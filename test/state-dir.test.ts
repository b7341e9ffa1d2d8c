import { mkdtemp, mkdir, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readStateFile, StateDirError, writeStateFile } from "../src/state/state-dir.js";
import { foreignLock, parseLockText, withLock } from "../src/state/state-lock.js";
import { readJournal, updateJournal, type JournalEntry } from "../src/sync/journal.js";

let root: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "uspark-statedir-"));
  outside = await mkdtemp(path.join(tmpdir(), "uspark-outside-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

function entry(p: string): JournalEntry {
  return { apiUrl: "http://127.0.0.1:4400", projectId: "p", path: p, local: `/x/${p}`, reason: "down", time: new Date().toISOString() };
}

describe("the .uspark directory", () => {
  it("refuses a .uspark that is a symlink: nothing is written where it points", async () => {
    await symlink(outside, path.join(root, ".uspark"));
    await expect(writeStateFile(root, "state.json", "{}")).rejects.toBeInstanceOf(StateDirError);
    await expect(updateJournal(root, { add: [entry("a")] })).rejects.toThrow(/symlink/);
    expect(await readdir(outside)).toEqual([]);
  });

  it("refuses a pending.json that is a symlink: an outside file is never read, so never printed", async () => {
    await writeFile(path.join(outside, "secret"), "SECRET-BYTES that must not reach a terminal");
    await mkdir(path.join(root, ".uspark"));
    await symlink(path.join(outside, "secret"), path.join(root, ".uspark", "pending.json"));
    const error = await readJournal(root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateDirError);
    expect(String(error)).not.toContain("SECRET");
    await expect(readStateFile(root, "pending.json")).rejects.toThrow(/symlink/);
  });

  it("replaces a symlinked file by a real one on write, leaving its target untouched", async () => {
    await writeFile(path.join(outside, "target"), "keep");
    await mkdir(path.join(root, ".uspark"));
    await symlink(path.join(outside, "target"), path.join(root, ".uspark", "state.json"));
    await writeStateFile(root, "state.json", "new");
    expect(await readFile(path.join(outside, "target"), "utf8")).toBe("keep");
    expect(await readStateFile(root, "state.json")).toBe("new");
  });

  it("creates .uspark when it is missing and reads a missing file as undefined", async () => {
    expect(await readStateFile(root, "state.json")).toBeUndefined();
    await writeStateFile(root, "state.json", "x");
    expect(await readStateFile(root, "state.json")).toBe("x");
  });
});

describe("the lock", () => {
  it("keeps every entry when many sessions journal at once", async () => {
    await Promise.all(Array.from({ length: 25 }, (_, i) => updateJournal(root, { add: [entry(`f${i}`)] })));
    expect((await readJournal(root)).map((e) => e.path).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `f${i}`).sort());
  });

  it("breaks a lock whose process is gone", async () => {
    await mkdir(path.join(root, ".uspark"));
    await writeFile(path.join(root, ".uspark", "pending.json.lock"), "999999999\n");
    expect(await withLock(root, "pending.json", async () => "ran", { timeoutMs: 2000 })).toBe("ran");
  });

  it("gives up with a clear error while a live process holds it", async () => {
    await mkdir(path.join(root, ".uspark"));
    await writeFile(path.join(root, ".uspark", "pending.json.lock"), `${process.ppid}\n`);
    await expect(withLock(root, "pending.json", async () => "ran", { timeoutMs: 100 })).rejects.toThrow(/held by another uspark process/);
  });
});

describe("whose root lock it is", () => {
  const ours = { pid: 10, start: "5000", root: "/work/app", dir: "2049:77", boot: "b-now" };
  it.each([
    { why: "this root, this boot", lock: "99\nroot /work/app\ndir 2049:77\nboot b-now\n", foreign: undefined },
    { why: "the same directory renamed", lock: "99\nroot /work/old-name\ndir 2049:77\nboot b-now\n", foreign: undefined },
    {
      why: "a copy (another inode)",
      lock: "99\nroot /work/app\ndir 2049:78\nboot b-now\n",
      foreign: "for /work/app, another directory (this one is a copy of it?)",
    },
    { why: "an earlier boot", lock: "99\nroot /work/app\ndir 2049:77\nboot b-then\n", foreign: "from an earlier boot" },
    { why: "a lock of before (the pid alone)", lock: "99\n", foreign: undefined },
  ])("$why", ({ lock, foreign }) => {
    expect(foreignLock(parseLockText(lock)!, ours)).toBe(foreign);
  });

  it("a half-written lock names no one", () => {
    expect(parseLockText("")).toBeUndefined();
    expect(parseLockText("12")?.pid).toBe(12);
  });
});
