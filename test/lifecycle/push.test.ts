import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runPush, type PushOptions } from "../../src/lifecycle/push.js";
import { readJournal, updateJournal } from "../../src/sync/journal.js";
import { captureReporter, remoteFiles, startMemoryRef, startProxy, syncOptions, tempDir, type RefServer } from "../kit/sync.js";

let root: string;
let cleanupRoot: () => Promise<void>;
let server: RefServer;
let log: ReturnType<typeof captureReporter>;

beforeEach(async () => {
  ({ dir: root, cleanup: cleanupRoot } = await tempDir());
  server = await startMemoryRef();
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

const push = (extra: Partial<PushOptions> = {}, apiUrl = server.url) =>
  runPush({ ...syncOptions(root, apiUrl, log.reporter), paths: [], pending: false, ignore: [], cwd: root, ...extra });

const remotePaths = async () => [...(await remoteFiles(server.url)).keys()].sort();

describe("uspark push", () => {
  it("pushes the whole tree in one commit; a second push changes nothing", async () => {
    const files: Record<string, string> = { ".gitignore": "*.log\n", "x.log": "no" };
    for (let i = 0; i < 12; i++) files[`src/f${String(i).padStart(2, "0")}.ts`] = `file ${i}`;
    await tree(files);
    expect(await push()).toBe(0);
    expect(log.events("commit")).toHaveLength(1);
    const remote = await remotePaths();
    expect(remote).toHaveLength(13);
    expect(remote).not.toContain("x.log");
    expect(log.events("summary")[0]!.message).toBe("push: 13 files pushed in 1 commit, 0 unchanged");

    expect(await push()).toBe(0);
    expect(log.events("summary")[1]!.message).toBe("push: 0 files pushed in 0 commits, 13 unchanged");
  });

  it("a push that commits only a conflict copy says so in its summary", async () => {
    await tree({ "a.txt": "one" });
    expect(await push()).toBe(0);
    const { dir: other, cleanup } = await tempDir("uspark-other-");
    try {
      await writeFile(path.join(other, "a.txt"), "theirs");
      expect(
        await runPush({
          ...syncOptions(other, server.url, captureReporter().reporter),
          paths: [],
          pending: false,
          ignore: [],
          cwd: other,
          force: true,
        }),
      ).toBe(0);
    } finally {
      await cleanup();
    }
    await tree({ "a.txt": "mine" });
    expect(await push()).toBe(1);
    expect(log.events("summary")[1]!.message).toMatch(/^push: 0 files pushed and 1 conflict copy in 1 commit, /);
  });

  it("a file the server refuses as too large (413) is said with what helps, and not journaled for a retry that cannot help", async () => {
    const small = await startMemoryRef(undefined, { maxBlobBytes: 1024 });
    try {
      await tree({ "a.ts": "a", "big.bin": "x".repeat(2000) });
      const code = await push({}, small.url);
      expect(code).toBe(1);
      expect([...(await remoteFiles(small.url)).keys()]).toEqual(["a.ts"]);
      expect(await readJournal(root)).toEqual([]);
      expect(log.text()).not.toContain("--pending");
      expect(log.text()).toMatch(/big\.bin.*a file this large.*raise the server.s limit/);
    } finally {
      await small.stop();
    }
  });

  it("named paths: files and directories; outside the root is a usage error (exit 2), nothing sent", async () => {
    await tree({ "a.ts": "a", "dir/b.ts": "b", "dir/c.ts": "c", "other.ts": "o" });
    const { dir: outside, cleanup } = await tempDir("uspark-outside-");
    try {
      await writeFile(path.join(outside, "secret"), "s");
      expect(await push({ paths: ["a.ts", path.join(outside, "secret")] })).toBe(2);
      expect(await remotePaths()).toEqual([]);
      expect(await push({ paths: ["a.ts", "dir"] })).toBe(0);
      expect(await remotePaths()).toEqual(["a.ts", "dir/b.ts", "dir/c.ts"]);
    } finally {
      await cleanup();
    }
  });

  it("--prefix pushes only that directory, stripped remotely", async () => {
    await tree({ "app/src/a.ts": "a", "app/README.md": "r", "docs/x.md": "x" });
    expect(await push({ prefix: "app" })).toBe(0);
    expect(await remotePaths()).toEqual(["README.md", "src/a.ts"]);
  });

  it("a delete of a file the base held goes out; a file now ignored here is left alone remotely", async () => {
    await tree({ "a.ts": "a", "b.ts": "b", "keep.log": "log" });
    expect(await push()).toBe(0);
    await rm(path.join(root, "b.ts"));
    await writeFile(path.join(root, ".gitignore"), "*.log\n");
    expect(await push()).toBe(0);
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

  it("--pending with paths is a usage error (exit 2)", async () => {
    expect(await push({ pending: true, paths: ["a"] })).toBe(2);
    expect(log.events("usage")).toHaveLength(1);
  });

  it("a server that stays down ends the push after the idle timeout (exit 1), said once", async () => {
    const proxy = await startProxy(server.url, () => ({ kind: "answer", status: 503, body: { error: "down" } }));
    try {
      await tree({ "a.ts": "a" });
      const started = Date.now();
      expect(await push({ timeoutMs: 300 }, proxy.url)).toBe(1);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(log.events("push-failed")[0]!.message).toMatch(/has not answered for 300 ms/);
    } finally {
      await proxy.close();
    }
  });

  it("a 401 is exit 1 with the server's reason", async () => {
    const guarded = await startMemoryRef("right");
    try {
      await tree({ "a.ts": "a" });
      expect(await push({ token: "wrong" }, guarded.url)).toBe(1);
      expect(log.text()).toMatch(/401/);
    } finally {
      await guarded.stop();
    }
  });
});
