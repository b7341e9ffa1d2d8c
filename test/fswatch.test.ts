import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  type FSWatcher,
} from "node:fs";
import { watch } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startFsWatcher, type FsWatcher, type FsWatcherOptions } from "../src/fswatch/index.js";
import { Reporter } from "../src/report/reporter.js";
import { startHarness, type Harness } from "./kit/fswatch.js";

const WAIT_MS = 10_000;

let dirs: string[] = [];
let watchers: FsWatcher[] = [];

beforeEach(() => {
  // The suite decides the mode itself, whatever the environment says.
  vi.stubEnv("CHOKIDAR_USEPOLLING", "");
});

afterEach(async () => {
  await Promise.all(watchers.map((watcher) => watcher.close()));
  watchers = [];
  vi.unstubAllEnvs();
  for (const dir of dirs) {
    chmodTree(dir);
    rmSync(dir, { recursive: true, force: true });
  }
  dirs = [];
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-fswatch-test-")));
  dirs.push(dir);
  return dir;
}

function chmodTree(dir: string): void {
  try {
    execFileSync("chmod", ["-R", "u+rwx", dir], { stdio: "ignore" });
  } catch {
    // Best effort: rmSync says what is left.
  }
}

/** Writes files (creating their directories) relative to `root`. */
function put(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
}

async function watchTree(root: string, options: Partial<FsWatcherOptions> = {}): Promise<Harness> {
  const h = await startHarness(root, options, WAIT_MS);
  watchers.push(h.watcher);
  return h;
}

/** Every change is a confirmed "fs" change to an absolute path inside the root. */
function expectWellFormed(h: Harness): void {
  for (const change of h.changes) {
    expect(change).toMatchObject({ cause: "fs", confirmed: true });
    expect(path.isAbsolute(change.path)).toBe(true);
    expect(change.path.startsWith(h.root + path.sep)).toBe(true);
  }
}

describe("startFsWatcher", { timeout: 30_000 }, () => {
  it("should return at once and resolve ready after the initial scan", async () => {
    const root = tempDir();
    put(root, { "a.ts": "a", "src/b.ts": "b", "src/deep/c.ts": "c" });
    const watcher = startFsWatcher({ root, report: new Reporter({ stream: { write() {} } }), onChange() {} });
    watchers.push(watcher);
    // Nothing was walked yet when it returned: the walk runs in the background.
    expect(watcher.stats()).toEqual({ dirs: 0, files: 0, polledDirs: 0 });
    expect(watcher.mode).toBe("events");
    await watcher.ready;
    expect(watcher.stats()).toEqual({ dirs: 3, files: 3, polledDirs: 0 });
  });

  it("should not report the files that were there before it started", async () => {
    const root = tempDir();
    put(root, { "old.ts": "old" });
    const h = await watchTree(root);
    put(root, { "new.ts": "new" });
    await h.saw("write new.ts");
    expect(h.seen()).not.toContain("write old.ts");
  });

  it("should report an in-place edit made by sed -i (temp file renamed over)", async () => {
    const h = await watchTree(tempDir());
    put(h.root, { "src/a.ts": "const a = 1;\n" });
    await h.saw("write src/a.ts");
    h.changes.length = 0;
    execFileSync("sed", ["-i", "s/1/2/", path.join(h.root, "src/a.ts")]);
    await h.saw("write src/a.ts");
    expectWellFormed(h);
  });

  it("should report rm of a file as a delete", async () => {
    const root = tempDir();
    put(root, { "gone.ts": "x" });
    const h = await watchTree(root);
    unlinkSync(path.join(root, "gone.ts"));
    await h.saw("delete gone.ts");
    expectWellFormed(h);
  });

  it("should report mv a b as a delete of a and a write of b", async () => {
    const root = tempDir();
    put(root, { "a.ts": "x" });
    const h = await watchTree(root);
    renameSync(path.join(root, "a.ts"), path.join(root, "b.ts"));
    await h.until((seen) => seen.includes("delete a.ts") && seen.includes("write b.ts"), "delete a.ts and write b.ts");
    expectWellFormed(h);
  });

  it("should report an atomic save (write a temp file, fsync, rename over) as a write of the target", async () => {
    const root = tempDir();
    put(root, { "doc.md": "v1" });
    const h = await watchTree(root);
    const temp = path.join(root, ".doc.md.tmp-123");
    const fd = openSync(temp, "w");
    writeSync(fd, "v2");
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path.join(root, "doc.md"));
    await h.saw("write doc.md");
    // Whatever was said about the temp file, its last word is that it is gone.
    const temps = h.seen().filter((line) => line.endsWith(".doc.md.tmp-123"));
    if (temps.length > 0) expect(temps.at(-1)).toBe("delete .doc.md.tmp-123");
  });

  it("should report the file as written when it is deleted and recreated at once", async () => {
    const root = tempDir();
    put(root, { "f.ts": "v1" });
    const h = await watchTree(root);
    unlinkSync(path.join(root, "f.ts"));
    writeFileSync(path.join(root, "f.ts"), "v2");
    await h.saw("write f.ts");
    await h.watcher.settle();
    // The last word on the path is a write: the file exists.
    expect(
      h
        .seen()
        .filter((line) => line.endsWith(" f.ts"))
        .at(-1),
    ).toBe("write f.ts");
  });

  it("should report a file written into a directory created a moment before", async () => {
    const h = await watchTree(tempDir());
    // Same tick, no gap at all: the directory's watch cannot exist before the file does.
    mkdirSync(path.join(h.root, "gen/x"), { recursive: true });
    writeFileSync(path.join(h.root, "gen/x/f"), "\n");
    await h.saw("write gen/x/f");
    // As a shell does it, too.
    execFileSync("sh", ["-c", "mkdir -p gen/y && echo > gen/y/f"], { cwd: h.root });
    await h.saw("write gen/y/f");
    expectWellFormed(h);
  });

  it("should watch every directory of a new tree made by mkdir -p, for later writes too", async () => {
    const h = await watchTree(tempDir());
    execFileSync("sh", ["-c", "mkdir -p a/b/c/d && echo > a/b/c/d/first && echo > a/b/top"], { cwd: h.root });
    await h.until((seen) => seen.includes("write a/b/c/d/first") && seen.includes("write a/b/top"), "both files of the new tree");
    writeFileSync(path.join(h.root, "a/b/c/d/later"), "later");
    writeFileSync(path.join(h.root, "a/b/c/later"), "later");
    await h.until((seen) => seen.includes("write a/b/c/d/later") && seen.includes("write a/b/c/later"), "the later writes");
  });

  it("should report a directory moved in from outside as writes of its files", async () => {
    const outside = tempDir();
    put(outside, { "pkg/index.ts": "i", "pkg/lib/util.ts": "u" });
    const h = await watchTree(tempDir());
    renameSync(path.join(outside, "pkg"), path.join(h.root, "pkg"));
    await h.until((seen) => seen.includes("write pkg/index.ts") && seen.includes("write pkg/lib/util.ts"), "the moved-in files");
  });

  it("should report deletes of the known files under a removed directory", async () => {
    const root = tempDir();
    put(root, { "lib/a.ts": "a", "lib/sub/b.ts": "b", "keep.ts": "k" });
    const h = await watchTree(root);
    rmSync(path.join(root, "lib"), { recursive: true });
    await h.until((seen) => seen.includes("delete lib/a.ts") && seen.includes("delete lib/sub/b.ts"), "deletes under lib/");
    expect(h.seen()).not.toContain("delete keep.ts");
    // No event for the directories themselves: they are not files.
    expect(h.seen().filter((line) => line === "delete lib" || line === "delete lib/sub")).toEqual([]);
  });

  it("should report deletes of the known files of a directory moved out of the root", async () => {
    const root = tempDir();
    const outside = tempDir();
    put(root, { "lib/a.ts": "a", "lib/sub/b.ts": "b" });
    const h = await watchTree(root);
    renameSync(path.join(root, "lib"), path.join(outside, "lib"));
    await h.until((seen) => seen.includes("delete lib/a.ts") && seen.includes("delete lib/sub/b.ts"), "deletes under lib/");
    // And nothing of where it went.
    expectWellFormed(h);
  });

  it("should not report .gitignored build output, nor even watch an ignored directory", async () => {
    const root = tempDir();
    put(root, { ".gitignore": "dist/\n*.log\n", "dist/old.js": "o", "src/a.ts": "a" });
    const h = await watchTree(root);
    expect(h.watcher.stats().dirs).toBe(2); // the root and src/
    put(root, { "dist/out.js": "x", "dist/sub/deep.js": "x", "debug.log": "x", "src/trace.log": "x" });
    put(root, { "src/sentinel.ts": "s" });
    await h.saw("write src/sentinel.ts");
    await h.watcher.settle();
    expect(h.seen()).toEqual(["write src/sentinel.ts"]);
  });

  it("should honour nested .gitignore files, a deeper one overriding a shallower one", async () => {
    const root = tempDir();
    put(root, { ".gitignore": "*.log\n", "pkg/.gitignore": "gen/\n!keep.log\n", "pkg/src/a.ts": "a" });
    const h = await watchTree(root);
    put(root, { "pkg/gen/x.ts": "x", "gen/y.ts": "y", "pkg/other.log": "x", "pkg/keep.log": "k", "pkg/src/keep.log": "k", "top.log": "t" });
    put(root, { "sentinel.ts": "s" });
    await h.until((seen) => seen.includes("write sentinel.ts") && seen.includes("write gen/y.ts"), "the sentinel");
    await h.watcher.settle();
    expect(h.seen().sort()).toEqual(["write gen/y.ts", "write pkg/keep.log", "write pkg/src/keep.log", "write sentinel.ts"]);
  });

  it("should apply a changed .gitignore to later events", async () => {
    const root = tempDir();
    put(root, { ".gitignore": "\n", "out/a.js": "a" });
    const h = await watchTree(root);
    writeFileSync(path.join(root, ".gitignore"), "out/\n");
    await h.saw("write .gitignore");
    await h.watcher.settle();
    put(root, { "out/b.js": "b", "sentinel.ts": "s" });
    await h.saw("write sentinel.ts");
    await h.watcher.settle();
    expect(h.seen()).not.toContain("write out/b.js");
    // And back: no longer ignored, watched again.
    writeFileSync(path.join(root, ".gitignore"), "\n");
    await h.watcher.settle();
    put(root, { "out/c.js": "c" });
    await h.saw("write out/c.js");
  });

  it("should never report or watch node_modules, .git or .uspark", async () => {
    const root = tempDir();
    put(root, {
      "node_modules/x/index.js": "x",
      ".git/HEAD": "ref",
      ".uspark/pending.json": "{}",
      "pkg/node_modules/y.js": "y",
      "a.ts": "a",
    });
    const h = await watchTree(root);
    expect(h.watcher.stats().dirs).toBe(2); // the root and pkg/
    put(root, {
      "node_modules/x/index.js": "x2",
      "node_modules/z.js": "z",
      ".git/index": "i",
      ".uspark/pending.json": "[]",
      "pkg/node_modules/y.js": "y2",
    });
    execFileSync("sh", ["-c", "mkdir -p sub/node_modules/q && echo > sub/node_modules/q/i.js && echo > sub/ok.ts"], { cwd: root });
    await h.saw("write sub/ok.ts");
    await h.watcher.settle();
    expect(h.seen()).toEqual(["write sub/ok.ts"]);
  });

  it("should not report files that match an --ignore glob", async () => {
    const h = await watchTree(tempDir(), { ignore: ["*.tmp", "cache/", "docs/**/*.png"] });
    put(h.root, { "a.tmp": "x", "cache/c.js": "x", "docs/img/logo.png": "x", "docs/img/logo.svg": "x" });
    await h.saw("write docs/img/logo.svg");
    await h.watcher.settle();
    expect(h.seen()).toEqual(["write docs/img/logo.svg"]);
  });

  it("should not follow a symlink that points outside the root", async () => {
    const root = tempDir();
    const outside = tempDir();
    put(outside, { "secret.txt": "s" });
    const h = await watchTree(root);
    symlinkSync(outside, path.join(root, "linked-dir"));
    symlinkSync(path.join(outside, "secret.txt"), path.join(root, "linked-file"));
    put(outside, { "secret.txt": "s2", "new.txt": "n" });
    put(root, { "sentinel.ts": "s" });
    await h.saw("write sentinel.ts");
    await h.watcher.settle();
    expect(h.seen()).toEqual(["write sentinel.ts"]);
    expectWellFormed(h);
  });

  it("should resolve settle() only after a change made just before it was delivered", async () => {
    const h = await watchTree(tempDir());
    writeFileSync(path.join(h.root, "last-second.ts"), "x");
    await h.watcher.settle();
    expect(h.seen()).toContain("write last-second.ts");
  });

  it("should resolve settle() within maxMs even while changes keep coming", async () => {
    const h = await watchTree(tempDir());
    let n = 0;
    const writer = setInterval(() => writeFileSync(path.join(h.root, `busy-${n++ % 3}.ts`), String(n)), 5);
    try {
      const started = performance.now();
      await h.watcher.settle({ quietMs: 150, maxMs: 400 });
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      clearInterval(writer);
    }
  });

  it("should report nothing after close()", async () => {
    const root = tempDir();
    const h = await watchTree(root);
    // A second watcher on the same tree tells when the events have come.
    const witness = await watchTree(root);
    await h.watcher.close();
    put(root, { "after-close.ts": "x" });
    await witness.saw("write after-close.ts");
    await witness.watcher.settle();
    expect(h.changes).toEqual([]);
  });

  it("should warn once, naming the fix, and poll what it cannot watch when the inotify limit is reached", async () => {
    const root = tempDir();
    put(root, { "a/x.ts": "x", "b/y.ts": "y", "c/z.ts": "z" });
    let allowed = 2; // the root and one more
    const watchDirectory = (dir: string, listener: (event: string, filename: string | null) => void): FSWatcher => {
      if (allowed-- <= 0)
        throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${dir}'`), { code: "ENOSPC" });
      return watch(dir, { persistent: false }, listener);
    };
    const h = await watchTree(root, { watchDirectory });
    expect(h.watcher.stats().polledDirs).toBe(2);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/max_user_watches/);
    expect(h.warnings[0]).toMatch(/--poll/);
    // Every directory still reports its changes, watched or polled.
    put(root, { "a/x.ts": "x2", "b/y.ts": "y2", "c/z.ts": "z2", "c/new.ts": "n" });
    unlinkSync(path.join(root, "b/y.ts"));
    await h.until(
      (seen) => ["write a/x.ts", "delete b/y.ts", "write c/z.ts", "write c/new.ts"].every((line) => seen.includes(line)),
      "changes in watched and polled directories",
    );
    expect(h.warnings).toHaveLength(1);
  });

  it("should warn once and keep watching the rest when a directory cannot be watched for permissions", async () => {
    const root = tempDir();
    put(root, { "open/a.ts": "a", "locked/b.ts": "b", "locked2/c.ts": "c" });
    const watchDirectory = (dir: string, listener: (event: string, filename: string | null) => void): FSWatcher => {
      if (path.basename(dir).startsWith("locked"))
        throw Object.assign(new Error(`EACCES: permission denied, watch '${dir}'`), { code: "EACCES" });
      return watch(dir, { persistent: false }, listener);
    };
    const h = await watchTree(root, { watchDirectory });
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/locked2?\/ \(permission denied\)/);
    put(root, { "open/a.ts": "a2" });
    await h.saw("write open/a.ts");
  });

  it.skipIf(process.getuid?.() === 0)("should warn once and keep watching the rest when a subdirectory is unreadable", async () => {
    const root = tempDir();
    put(root, { "open/a.ts": "a", "locked/b.ts": "b" });
    chmodSync(path.join(root, "locked"), 0o000);
    const h = await watchTree(root);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/locked\//);
    put(root, { "open/a.ts": "a2" });
    await h.saw("write open/a.ts");
  });

  it("should warn, not throw, when the root does not exist", async () => {
    const root = path.join(tempDir(), "missing");
    const h = await watchTree(root);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/cannot watch/);
    await h.watcher.settle({ quietMs: 10 });
  });

  describe("polling (--poll, CHOKIDAR_USEPOLLING)", () => {
    it("should report edits, deletes, renames and new trees by polling", async () => {
      const root = tempDir();
      put(root, { "a.ts": "a", "b.ts": "b", "c.ts": "c", "node_modules/m.js": "m" });
      const h = await watchTree(root, { poll: 50 });
      expect(h.watcher.mode).toBe("poll");
      expect(h.watcher.stats().polledDirs).toBe(1);
      put(root, { "a.ts": "a2 longer" });
      unlinkSync(path.join(root, "b.ts"));
      renameSync(path.join(root, "c.ts"), path.join(root, "d.ts"));
      execFileSync("sh", ["-c", "mkdir -p x/y && echo > x/y/f && echo > node_modules/n.js"], { cwd: root });
      await h.until(
        (seen) => ["write a.ts", "delete b.ts", "delete c.ts", "write d.ts", "write x/y/f"].every((line) => seen.includes(line)),
        "the polled changes",
      );
      await h.watcher.settle();
      expect(h.seen().some((line) => line.includes("node_modules"))).toBe(false);
    });

    it("should find a change made just before settle() without waiting for the next round", async () => {
      const h = await watchTree(tempDir(), { poll: 60_000 });
      writeFileSync(path.join(h.root, "late.ts"), "x");
      await h.watcher.settle();
      expect(h.seen()).toContain("write late.ts");
    });

    it("should poll when CHOKIDAR_USEPOLLING is set", async () => {
      vi.stubEnv("CHOKIDAR_USEPOLLING", "1");
      vi.stubEnv("CHOKIDAR_INTERVAL", "50");
      const h = await watchTree(tempDir());
      expect(h.watcher.mode).toBe("poll");
      put(h.root, { "p.ts": "p" });
      await h.saw("write p.ts");
    });
  });
});
