import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runPush, type PushOptions } from "../../src/push.js";
import { readJournal, updateJournal } from "../../src/sync/journal.js";
import { walkFiles } from "../../src/sync/walk.js";
import { captureReporter, remoteFiles, startProxy, startRef, syncOptions, tempDir, type RefServer } from "./helpers.js";

let root: string;
let cleanupRoot: () => Promise<void>;
let server: RefServer;
let log: ReturnType<typeof captureReporter>;

beforeEach(async () => {
  ({ dir: root, cleanup: cleanupRoot } = await tempDir());
  server = await startRef();
  log = captureReporter();
});
afterEach(async () => {
  await server.stop();
  await cleanupRoot();
});

async function tree(files: Record<string, string>) {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
}

const push = (extra: Partial<PushOptions> = {}) =>
  runPush({ ...syncOptions(root, server.url, log.reporter), paths: [], pending: false, delete: false, ignore: [], cwd: root, ...extra });

const remotePaths = async () => [...(await remoteFiles(server.url)).keys()].sort();

describe("walkFiles", () => {
  it("honours builtin ignores, nested .gitignore files (deeper wins), --ignore; no symlinks", async () => {
    await tree({
      ".gitignore": "*.log\nbuild/\n",
      "a.ts": "",
      "debug.log": "",
      "build/out.js": "",
      "node_modules/x/index.js": "",
      ".git/config": "",
      ".uspark/pending.json": "",
      "pkg/.gitignore": "!keep.log\nlocal.txt\n",
      "pkg/keep.log": "",
      "pkg/other.log": "",
      "pkg/local.txt": "",
      "pkg/src/b.ts": "",
      "tmp/c.ts": "",
    });
    await symlink(path.join(root, "a.ts"), path.join(root, "link.ts"));
    await symlink("/etc", path.join(root, "etc"));
    const files: string[] = [];
    for await (const abs of walkFiles({ root, ignore: ["tmp/"] })) files.push(path.relative(root, abs));
    expect(files).toEqual([".gitignore", "a.ts", "pkg/.gitignore", "pkg/keep.log", "pkg/src/b.ts"]);
  });

  it("applies the .gitignore files above a start directory", async () => {
    await tree({ ".gitignore": "*.tmp\n", "sub/a.ts": "", "sub/b.tmp": "" });
    const files: string[] = [];
    for await (const abs of walkFiles({ root, start: path.join(root, "sub") })) files.push(path.relative(root, abs));
    expect(files).toEqual(["sub/a.ts"]);
  });
});

describe("uspark push", () => {
  it("pushes the whole tree in commits of bounded size; a second push changes nothing", async () => {
    const files: Record<string, string> = { ".gitignore": "*.log\n", "x.log": "no" };
    for (let i = 0; i < 12; i++) files[`src/f${String(i).padStart(2, "0")}.ts`] = `file ${i}`;
    await tree(files);
    expect(await push({ maxBatch: 5 })).toBe(0);
    expect(log.events("commit")).toHaveLength(3);
    const remote = await remotePaths();
    expect(remote).toHaveLength(13);
    expect(remote).not.toContain("x.log");
    expect(log.events("summary")[0]!.message).toBe("push: 13 files pushed in 3 commits, 0 unchanged (13 considered)");

    expect(await push()).toBe(0);
    expect(log.events("summary")[1]!.message).toBe("push: 0 files pushed in 0 commits, 13 unchanged (13 considered)");
  });

  it("named paths: files and directories; outside the root refused with a warning (exit 1)", async () => {
    await tree({ "a.ts": "a", "dir/b.ts": "b", "dir/c.ts": "c", "other.ts": "o" });
    const { dir: outside, cleanup } = await tempDir("uspark-outside-");
    try {
      await writeFile(path.join(outside, "secret"), "s");
      expect(await push({ paths: ["a.ts", "dir", path.join(outside, "secret"), "../x"] })).toBe(1);
      expect(await remotePaths()).toEqual(["a.ts", "dir/b.ts", "dir/c.ts"]);
      expect(log.events("refused").map((r) => r.level)).toEqual(["warn", "warn"]);
    } finally {
      await cleanup();
    }
  });

  it("--prefix pushes only that directory, stripped remotely", async () => {
    await tree({ "app/src/a.ts": "a", "app/README.md": "r", "docs/x.md": "x" });
    expect(await push({ prefix: "app" })).toBe(0);
    expect(await remotePaths()).toEqual(["README.md", "src/a.ts"]);
  });

  it("--delete removes remote files missing locally, but not ignored local files", async () => {
    await tree({ "a.ts": "a", "b.ts": "b", "keep.log": "log" });
    expect(await push()).toBe(0);
    await rm(path.join(root, "b.ts"));
    await writeFile(path.join(root, ".gitignore"), "*.log\n");
    expect(await push()).toBe(0);
    expect(await remotePaths()).toEqual([".gitignore", "a.ts", "b.ts", "keep.log"]);
    expect(await push({ delete: true })).toBe(0);
    expect(await remotePaths()).toEqual([".gitignore", "a.ts", "keep.log"]);
  });

  it("--pending retries the journal's entries for this project and removes what succeeded", async () => {
    await tree({ "a.ts": "a", "big.bin": "x".repeat(2000) });
    const time = new Date(Date.now() - 1000).toISOString();
    const mine = { apiUrl: server.url, projectId: "p1", reason: "flush timeout", time };
    await updateJournal(root, {
      add: [
        { ...mine, path: "a.ts", local: path.join(root, "a.ts") },
        { ...mine, path: "big.bin", local: path.join(root, "big.bin") },
        { ...mine, projectId: "other", path: "a.ts", local: path.join(root, "a.ts") },
      ],
    });
    expect(await push({ pending: true, maxFileSize: 1024 })).toBe(1);
    expect(await remotePaths()).toEqual(["a.ts"]);
    const left = await readJournal(root);
    expect(left.map((e) => `${e.projectId}:${e.path}`).sort()).toEqual(["other:a.ts", "p1:big.bin"]);
    expect(await push({ pending: true, maxFileSize: 4096 })).toBe(0);
    expect((await readJournal(root)).map((e) => e.projectId)).toEqual(["other"]);
  });

  it("bad combinations are usage errors (exit 2)", async () => {
    expect(await push({ pending: true, paths: ["a"] })).toBe(2);
    expect(await push({ pending: true, delete: true })).toBe(2);
  });

  it("a server that stays down ends the push after the idle timeout, journaled (exit 1)", async () => {
    const proxy = await startProxy(server.url, () => ({ kind: "answer", status: 503, body: { error: "down" } }));
    try {
      await tree({ "a.ts": "a" });
      const started = Date.now();
      const code = await runPush({
        ...syncOptions(root, proxy.url, log.reporter),
        paths: [],
        pending: false,
        delete: false,
        ignore: [],
        flushTimeoutMs: 300,
      });
      expect(code).toBe(1);
      expect(Date.now() - started).toBeLessThan(3000);
      expect((await readJournal(root)).map((e) => e.path)).toEqual(["a.ts"]);
      expect(log.events("not-synced")[0]!.message).toBe("not synced (still unsynced when the flush timeout (300 ms) ran out): a.ts");
      expect(log.events("summary")[0]).toMatchObject({ level: "error" });
      expect(log.events("summary")[0]!.message).toMatch(/uspark push --pending/);
    } finally {
      await proxy.close();
    }
  });

  it("a 401 makes exit code 1 and journals the files", async () => {
    const guarded = await startRef("right");
    try {
      await tree({ "a.ts": "a" });
      const code = await runPush({
        ...syncOptions(root, guarded.url, log.reporter, { token: "wrong" }),
        paths: [],
        pending: false,
        delete: false,
        ignore: [],
      });
      expect(code).toBe(1);
      expect((await readJournal(root)).map((e) => e.path)).toEqual(["a.ts"]);
    } finally {
      await guarded.stop();
    }
  });
});
