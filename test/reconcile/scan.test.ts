import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IgnoreEngine } from "../../src/ignore/engine.js";
import { BaseKeeper } from "../../src/reconcile/base-keeper.js";
import { DiskTree } from "../../src/reconcile/disk-tree.js";
import type { LocalTree } from "../../src/reconcile/local-tree.js";
import { Observer } from "../../src/reconcile/observe.js";
import { RemoteView } from "../../src/reconcile/remote-view.js";
import { scanTree } from "../../src/reconcile/scan.js";
import { fileStateStore } from "../../src/reconcile/state-store.js";
import { Reporter } from "../../src/report/reporter.js";
import { ApiClient } from "../../src/transfer/client.js";
import { ProjectRemote } from "../../src/transfer/project-remote.js";
import { RetryingCaller } from "../../src/transfer/retry.js";
import { captureReporter, sha256, tempDir } from "../kit/sync.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-scan-"));
});
afterEach(() => cleanup());

const quiet = new Reporter({ verbosity: "quiet", stream: { write: () => true } });

/** A one-way scan over the real tree and a real state file; the remote is never asked. */
async function scanner(
  options: { prefix?: string; ignore?: string[]; report?: Reporter; base?: Record<string, string>; onRead?: () => void } = {},
) {
  const report = options.report ?? quiet;
  let reads = 0;
  // The real tree, counting its reads.
  const tree: LocalTree = new (class extends DiskTree {
    override read(p: string, keep?: number) {
      reads++;
      options.onRead?.();
      return super.read(p, keep);
    }
  })({ root, prefix: options.prefix, ignore: new IgnoreEngine({ root, ignore: options.ignore }), maxFileSize: 1 << 20, report });
  const base = await BaseKeeper.load(
    { apiUrl: "http://127.0.0.1:1", projectId: "p", prefix: options.prefix },
    { store: fileStateStore(root), report },
  );
  for (const [p, content] of Object.entries(options.base ?? {})) base.settle(p, sha256(content));
  // Saved, as after any earlier session: the state file's mtime tells which stats can be trusted.
  await base.close();
  const client = new ApiClient({ apiUrl: "http://127.0.0.1:1", projectId: "p", requestTimeoutMs: 1000 });
  const view = new RemoteView(
    new ProjectRemote(client, new RetryingCaller({ report, host: "127.0.0.1" }), { concurrency: 1, report }),
    report,
  );
  const observer = new Observer({ tree, base, maxFileSize: 1 << 20 });
  const deps = { tree, base, view, report, observe: observer.observe.bind(observer), reads: () => observer.reads };
  return {
    base,
    reads: () => reads,
    scan: async (signal = new AbortController().signal) => scanTree(deps, false, signal),
  };
}

describe("a scan", () => {
  it("finds edits, new files and deletes against the base, nothing else", async () => {
    await writeFile(path.join(root, "same.txt"), "same");
    await writeFile(path.join(root, "edited.txt"), "new");
    await writeFile(path.join(root, "added.txt"), "added");
    const s = await scanner({ base: { "same.txt": "same", "edited.txt": "old", "gone.txt": "x" } });
    expect((await s.scan()).paths.sort()).toEqual(["added.txt", "edited.txt", "gone.txt"]);
  });

  it("stops hashing between two reads once aborted (SIGTERM during the hashing of a changed tree)", async () => {
    for (let i = 0; i < 64; i++) await writeFile(path.join(root, `f${i}.txt`), `new ${i}`);
    const abort = new AbortController();
    const s = await scanner({ onRead: () => abort.abort(new Error("stopped")) });
    await expect(s.scan(abort.signal)).rejects.toThrow("stopped");
    expect(s.reads()).toBeLessThanOrEqual(8);
  });

  it("reads a file again only when its stat moved: a quiet tree is stat'ed, never read", async () => {
    const file = path.join(root, "a.txt");
    await writeFile(file, "one");
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(file, minuteAgo, minuteAgo);
    const s = await scanner({ base: { "a.txt": "one" } });
    expect((await s.scan()).paths).toEqual([]);
    expect(s.reads()).toBe(1);
    expect((await s.scan()).paths).toEqual([]);
    expect(s.reads()).toBe(1);
    await writeFile(file, "two");
    await utimes(file, new Date(), new Date(Date.now() + 5000));
    expect((await s.scan()).paths).toEqual(["a.txt"]);
    expect(s.reads()).toBe(2);
  });

  it("never takes an ignored file for a delete, and never offers it for upload", async () => {
    await writeFile(path.join(root, ".gitignore"), "secret.env\n");
    await writeFile(path.join(root, "secret.env"), "KEY=1");
    const s = await scanner({ base: { "secret.env": "old", ".gitignore": "secret.env\n" } });
    expect((await s.scan()).paths).toEqual([]);
  });

  it("applies a .gitignore changed between two scans to the next one, with no file watcher to say so", async () => {
    await writeFile(path.join(root, ".gitignore"), "*.log\n");
    await mkdir(path.join(root, "sub"));
    await writeFile(path.join(root, "sub", ".gitignore"), "");
    await writeFile(path.join(root, "app.log"), "log");
    await writeFile(path.join(root, "sub", "secret.env"), "KEY=1");
    const s = await scanner();
    expect((await s.scan()).paths.sort()).toEqual([".gitignore", "sub/.gitignore", "sub/secret.env"]);
    await writeFile(path.join(root, ".gitignore"), "# nothing ignored any more\n");
    await writeFile(path.join(root, "sub", ".gitignore"), "*.env\n");
    expect((await s.scan()).paths.sort()).toEqual([".gitignore", "app.log", "sub/.gitignore"]);
  });

  it("maps paths under --prefix and leaves the rest of the tree alone", async () => {
    await mkdir(path.join(root, "site", "css"), { recursive: true });
    await writeFile(path.join(root, "site", "css", "a.css"), "a");
    await writeFile(path.join(root, "outside.txt"), "o");
    expect((await (await scanner({ prefix: "site" })).scan()).paths).toEqual(["css/a.css"]);
  });

  it("lists in-root files the API cannot represent, with a reason a user understands", async () => {
    await writeFile(path.join(root, "a\\b.txt"), "x");
    const long = "d".repeat(200);
    await mkdir(path.join(root, long, long, long, long, long, long), { recursive: true });
    await writeFile(path.join(root, long, long, long, long, long, long, "f.txt"), "x");
    const found = await (await scanner()).scan();
    expect(found.paths).toEqual([]);
    expect(found.unrepresentable.map((u) => u.reason).sort()).toEqual([
      "a backslash in the name cannot be stored remotely",
      "a path over 1024 bytes cannot be stored remotely",
    ]);
  });

  it("lists a name that is not valid UTF-8 as not synced, under --prefix too, and no longer once it is gone", async () => {
    await mkdir(path.join(root, "site"));
    const bad = Buffer.from(path.join(root, "site", "caf\xe9.txt"), "latin1");
    await writeFile(bad, "x");
    await mkdir(Buffer.from(path.join(root, "site", "d\xfcr"), "latin1"));
    await writeFile(path.join(root, "site", "fine.txt"), "x");
    const s = await scanner({ prefix: "site" });
    const first = await s.scan();
    expect(first.paths).toEqual(["fine.txt"]);
    expect(first.unrepresentable.map(({ remote, reason }) => `${remote}: ${reason}`).sort()).toEqual([
      "caf\\xe9.txt: the name is not valid UTF-8",
      "d\\xfcr/: the name is not valid UTF-8",
    ]);
    await rm(bad);
    await rm(Buffer.from(path.join(root, "site", "d\xfcr"), "latin1"), { recursive: true });
    expect((await s.scan()).unrepresentable).toEqual([]);
  });

  it("warns once about such a name, however many scans walk past it", async () => {
    await writeFile(Buffer.from(path.join(root, "caf\xe9.txt"), "latin1"), "x");
    const log = captureReporter();
    const s = await scanner({ report: log.reporter });
    for (let i = 0; i < 3; i++) expect((await s.scan()).unrepresentable).toHaveLength(1);
    expect(log.records.filter((r) => r.level === "warn").map((r) => r.message)).toEqual([
      "not synced caf\\xe9.txt: the name is not valid UTF-8, and project paths must be",
    ]);
  });

  it("treats a directory that vanished mid-session as deletes of what the base had in it", async () => {
    await mkdir(path.join(root, "d"));
    await writeFile(path.join(root, "d", "f"), "x");
    const s = await scanner({ base: { "d/f": "x" } });
    expect((await s.scan()).paths).toEqual([]);
    await rm(path.join(root, "d"), { recursive: true });
    expect((await s.scan()).paths).toEqual(["d/f"]);
  });

  it("holds the deletes when most of what the base holds is gone, but not for a rename of a directory", async () => {
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`src/f${i}.ts`, `content ${i}`]));
    const s = await scanner({ base: files });
    await mkdir(path.join(root, "lib"));
    for (const [p, content] of Object.entries(files)) await writeFile(path.join(root, "lib", path.basename(p)), content);
    expect((await s.scan()).paths).toHaveLength(40);
    expect(s.base.base.held.size).toBe(0);
    await rm(path.join(root, "lib"), { recursive: true });
    expect((await s.scan()).paths).toHaveLength(20);
    expect(s.base.base.held.size).toBe(20);
  });
});
