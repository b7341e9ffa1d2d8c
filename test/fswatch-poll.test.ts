import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdir,
  realpathSync,
  rmSync,
  unlinkSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FsWatcher } from "../src/fswatch/index.js";
import { startHarness } from "./kit/fswatch.js";

/**
 * What one poll round costs: each polled directory listed once, each entry stat'ed at most once.
 * The watcher's own `readdir` and `lstatSync` are counted (the calls pass through unchanged).
 */

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return { ...fs, readdir: vi.fn(fs.readdir), lstatSync: vi.fn(fs.lstatSync) };
});

let dirs: string[] = [];
let watchers: FsWatcher[] = [];

beforeEach(() => {
  vi.stubEnv("CHOKIDAR_USEPOLLING", "");
});

afterEach(async () => {
  await Promise.all(watchers.map((watcher) => watcher.close()));
  watchers = [];
  vi.unstubAllEnvs();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-fswatch-poll-")));
  dirs.push(dir);
  return dir;
}

/** How many times each path under `root` was passed to `fn` since the mock was last cleared. */
function callsUnder(fn: unknown, root: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [target] of vi.mocked(fn as (target: unknown) => unknown).mock.calls) {
    const abs = Buffer.isBuffer(target) ? target.toString() : String(target);
    if (abs !== root && !abs.startsWith(root + path.sep)) continue;
    const rel = path.relative(root, abs).split(path.sep).join("/") || ".";
    counts.set(rel, (counts.get(rel) ?? 0) + 1);
  }
  return counts;
}

describe("a poll round", { timeout: 30_000 }, () => {
  it("should list each directory once and stat each file once, however deep the tree", async () => {
    const root = tempDir();
    // A chain of 6 directories, 10 files each: a round used to list a directory once per ancestor.
    const chain: string[] = [];
    let dir = "";
    for (let depth = 0; depth < 6; depth++) {
      dir = dir === "" ? `d${depth}` : `${dir}/d${depth}`;
      chain.push(dir);
      mkdirSync(path.join(root, dir));
      for (let i = 0; i < 10; i++) writeFileSync(path.join(root, dir, `f${i}.ts`), "x");
    }
    // One interval longer than the test: the only round is the one settle() runs.
    const h = await startHarness(root, { poll: 600_000 });
    watchers.push(h.watcher);
    expect(h.watcher.stats()).toEqual({ dirs: 7, files: 60, polledDirs: 7 });
    writeFileSync(path.join(root, chain.at(-1)!, "f0.ts"), "changed");
    vi.mocked(readdir).mockClear();
    vi.mocked(lstatSync).mockClear();

    await h.watcher.settle();

    expect(h.seen()).toEqual([`write ${chain.at(-1)}/f0.ts`]);
    expect(Object.fromEntries(callsUnder(readdir, root))).toEqual(Object.fromEntries([".", ...chain].map((rel) => [rel, 1])));
    const stats = callsUnder(lstatSync, root);
    expect([...stats].filter(([, count]) => count > 1)).toEqual([]);
    // The files; no directory needs a stat of its own: its own listing is its check.
    expect(stats.size).toBe(60);
  });

  it("should list each polled directory once when the OS refused to watch them (inotify limit)", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "a", "b", "c"), { recursive: true });
    for (const dir of ["a", "a/b", "a/b/c"]) writeFileSync(path.join(root, dir, "f.ts"), "x");
    // The root is watched; a and everything below it are polled (no round but the one settle() runs).
    vi.stubEnv("CHOKIDAR_INTERVAL", "600000");
    const watchDirectory = (dir: string, listener: (event: string, filename: string | null) => void): FSWatcher => {
      if (dir.startsWith(path.join(root, "a")))
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: "ENOSPC" });
      return watch(dir, { persistent: false }, listener);
    };
    const h = await startHarness(root, { watchDirectory });
    watchers.push(h.watcher);
    expect(h.watcher.stats()).toMatchObject({ dirs: 4, polledDirs: 3 });
    writeFileSync(path.join(root, "a", "b", "c", "f.ts"), "changed");
    vi.mocked(readdir).mockClear();

    await h.watcher.settle();

    expect(h.seen()).toEqual(["write a/b/c/f.ts"]);
    const listed = callsUnder(readdir, path.join(root, "a"));
    expect(Object.fromEntries(listed)).toEqual({ ".": 1, b: 1, "b/c": 1 });
  });

  it("should compare a directory whole when the OS does not name the entry, polled subdirectories left to their poll", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "p"));
    writeFileSync(path.join(root, "gone.ts"), "x");
    writeFileSync(path.join(root, "p", "f.ts"), "x");
    const watchDirectory = (dir: string, listener: (event: string, filename: string | null) => void): FSWatcher => {
      if (dir === path.join(root, "p"))
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: "ENOSPC" });
      return watch(dir, { persistent: false }, (event) => listener(event, null));
    };
    const h = await startHarness(root, { watchDirectory });
    watchers.push(h.watcher);
    writeFileSync(path.join(root, "new.ts"), "x");
    unlinkSync(path.join(root, "gone.ts"));
    mkdirSync(path.join(root, "n"));
    writeFileSync(path.join(root, "n", "deep.ts"), "x");
    await h.until(
      (seen) => ["write new.ts", "delete gone.ts", "write n/deep.ts"].every((line) => seen.includes(line)),
      "changes found by listing",
    );
    writeFileSync(path.join(root, "p", "f.ts"), "changed");
    await h.watcher.settle();
    expect(h.seen()).toContain("write p/f.ts");
  });

  it("should still find a directory replaced under the same name, and what is new below it", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "d", "e"), { recursive: true });
    writeFileSync(path.join(root, "d", "old.ts"), "old");
    writeFileSync(path.join(root, "d", "e", "deep.ts"), "deep");
    const h = await startHarness(root, { poll: 600_000 });
    watchers.push(h.watcher);
    rmSync(path.join(root, "d"), { recursive: true });
    mkdirSync(path.join(root, "d", "e"), { recursive: true });
    writeFileSync(path.join(root, "d", "e", "deep.ts"), "reborn");
    writeFileSync(path.join(root, "d", "e", "new.ts"), "new");
    await h.watcher.settle();
    expect(h.seen().sort()).toEqual(["delete d/old.ts", "write d/e/deep.ts", "write d/e/new.ts"]);
  });
});
