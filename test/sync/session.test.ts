import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSyncSession, type SyncOptions } from "../../src/sync/index.js";
import { requeued } from "../../src/sync/session.js";
import { journalPath, readJournal } from "../../src/sync/journal.js";
import type { Timers } from "../../src/util/timers.js";
import {
  captureReporter,
  isBlobUpload,
  isCommit,
  remoteFiles,
  remoteVersion,
  sha256,
  startMemoryRef,
  startProxy,
  startRecorder,
  syncOptions,
  tempDir,
  eventually,
  type RefServer,
} from "../kit/sync.js";

const TOKEN = "tok-0123456789";

let root: string;
let cleanupRoot: () => Promise<void>;
let server: RefServer;
let log: ReturnType<typeof captureReporter>;

beforeEach(async () => {
  ({ dir: root, cleanup: cleanupRoot } = await tempDir());
  server = await startMemoryRef(TOKEN);
  log = captureReporter([TOKEN]);
});
afterEach(async () => {
  await server.stop();
  await cleanupRoot();
});

const target = (rel: string, cause = "Write") => ({ remote: rel, abs: path.join(root, rel), cause });
const options = (extra: Partial<SyncOptions> = {}, apiUrl = server.url) =>
  syncOptions(root, apiUrl, log.reporter, { token: TOKEN, ...extra });
const commitsSeen = () => server.requests.filter(isCommit).length;

/** A clock the test moves by hand; timers are only noted, so the test can read when the next is due. */
function manualClock() {
  let now = 0;
  const pending = new Set<{ at: number }>();
  const timers: Timers = {
    now: () => now,
    setTimeout: (_callback, ms) => {
      const timer = { at: now + ms };
      pending.add(timer);
      return timer;
    },
    clearTimeout: (timer) => pending.delete(timer as { at: number }),
  };
  return { timers, advance: (ms: number) => (now += ms), nextDue: () => Math.min(...[...pending].map((timer) => timer.at)) };
}

describe("sync session against the reference server", () => {
  it("pushes files: the server's bytes equal the local bytes; one line per commit", async () => {
    await mkdir(path.join(root, "src"));
    const files: Record<string, Buffer> = {
      "src/a.ts": Buffer.from("export const a = 1;\n"),
      "src/b.ts": Buffer.from("export const b = 2;\r\n"),
      "bin.dat": Buffer.from([0, 255, 254, 10, 13, 0]),
      "big.txt": Buffer.alloc(5 * 1024 * 1024, "x"), // above the keep-in-memory size: read twice
      "empty.txt": Buffer.alloc(0),
    };
    for (const [rel, bytes] of Object.entries(files)) await writeFile(path.join(root, rel), bytes);
    const session = createSyncSession(options());
    for (const rel of Object.keys(files)) session.add(target(rel));
    const result = await session.finish(10_000);
    expect(result).toMatchObject({ commits: 1, pushed: 5, deleted: 0, skipped: [], failed: [], journaled: 0 });
    const remote = await remoteFiles(server.url, "p1", TOKEN);
    expect(new Map([...remote].map(([k, v]) => [k, sha256(v)]))).toEqual(new Map(Object.entries(files).map(([k, v]) => [k, sha256(v)])));
    const commits = log.events("commit");
    expect(commits).toHaveLength(1);
    expect(commits[0]!.message).toMatch(/^committed v1: 5 files \(/);
    expect(commits[0]).toMatchObject({ level: "info", version: 1 });
    expect(log.text()).not.toContain(TOKEN);
  });

  it("skips files the remote already has, and deletes files that are gone", async () => {
    await writeFile(path.join(root, "a.txt"), "one");
    await writeFile(path.join(root, "b.txt"), "two");
    const first = createSyncSession(options());
    first.add(target("a.txt"));
    first.add(target("b.txt"));
    expect(await first.finish(10_000)).toMatchObject({ commits: 1, pushed: 2 });

    // A new session learns the remote state from GET /files: nothing to upload.
    const before = server.requests.length;
    const second = createSyncSession(options());
    second.add(target("a.txt"));
    await rm(path.join(root, "b.txt"));
    second.add(target("b.txt", "Delete"));
    second.add(target("never-existed.txt"));
    const result = await second.finish(10_000);
    expect(result).toMatchObject({ commits: 1, pushed: 0, deleted: 1, unchanged: 2 });
    const requests = server.requests.slice(before).map((r) => `${r.method} ${r.url.replace(/^\/api\/projects\/p1/, "")}`);
    expect(requests).toEqual(["GET /files", "POST /commits"]);
    expect([...(await remoteFiles(server.url, "p1", TOKEN)).keys()]).toEqual(["a.txt"]);
  });

  it("a copy of content the server has, at a new path, is committed without an upload", async () => {
    await writeFile(path.join(root, "a.txt"), "same");
    const first = createSyncSession(options());
    first.add(target("a.txt"));
    expect(await first.finish(10_000)).toMatchObject({ commits: 1, pushed: 1 });

    await writeFile(path.join(root, "copy.txt"), "same");
    const before = server.requests.length;
    const second = createSyncSession(options());
    second.add(target("copy.txt"));
    expect(await second.finish(10_000)).toMatchObject({ commits: 1, pushed: 1 });
    const requests = server.requests.slice(before).map((r) => `${r.method} ${r.url.replace(/^\/api\/projects\/p1/, "")}`);
    expect(requests).toEqual(["GET /files", "POST /commits"]);
  });

  it("20 changes of one file within 100 ms make one commit with the last content", async () => {
    const session = createSyncSession(options({ debounceMs: 300, maxWaitMs: 2000 }));
    const file = path.join(root, "hot.txt");
    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      await writeFile(file, `version ${i}\n`);
      session.add(target("hot.txt"));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(Date.now() - started).toBeLessThan(2000); // the premise: all within one max-wait
    await eventually(() => log.events("commit").length === 1, 5000, "the commit");
    const result = await session.finish(10_000);
    expect(result.commits).toBe(1);
    expect(commitsSeen()).toBe(1);
    expect((await remoteFiles(server.url, "p1", TOKEN)).get("hot.txt")!.toString()).toBe("version 19\n");
  });

  it("the file watcher's sighting of a write an event announced does not hold its batch back; a second write does", async () => {
    const clock = manualClock();
    const session = createSyncSession(options({ debounceMs: 300, maxWaitMs: 2000, timers: clock.timers }));
    await writeFile(path.join(root, "a.txt"), "a1");
    session.add(target("a.txt")); // the tool's event
    clock.advance(20);
    session.add(target("a.txt", "fs")); // the watcher sees the same write
    expect(clock.nextDue()).toBe(300);
    clock.advance(100);
    session.add(target("a.txt", "fs")); // written again (a formatter)
    expect(clock.nextDue()).toBe(420);
    await session.abort();
  });

  it("a change arriving during a flush goes into the next batch", async () => {
    await writeFile(path.join(root, "a.txt"), "a1");
    await writeFile(path.join(root, "b.txt"), "b1");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    const proxy = await startProxy(server.url, (req) => {
      if (isCommit(req) && !held) {
        held = true;
        return { kind: "forward-after", before: () => gate };
      }
      return undefined;
    });
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      await eventually(() => held, 5000, "the first commit");
      await writeFile(path.join(root, "b.txt"), "b2");
      session.add(target("b.txt"));
      release();
      const result = await session.finish(10_000);
      expect(result.commits).toBe(2);
      const bodies = proxy.seen.filter(isCommit).map((r) => JSON.parse(r.body.toString()).changes.map((c: { path: string }) => c.path));
      expect(bodies).toEqual([["a.txt"], ["b.txt"]]);
    } finally {
      await proxy.close();
    }
  });

  it("a file written while its commit is in flight is synced again with the new content", async () => {
    const file = path.join(root, "race.txt");
    await writeFile(file, "old");
    let touched = false;
    const proxy = await startProxy(server.url, (req) => {
      if (isCommit(req) && !touched) {
        touched = true;
        return { kind: "forward-after", before: () => writeFile(file, "newer content") };
      }
      return undefined;
    });
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("race.txt"));
      const result = await session.finish(10_000);
      expect(result.commits).toBe(2);
      expect((await remoteFiles(server.url, "p1", TOKEN)).get("race.txt")!.toString()).toBe("newer content");
    } finally {
      await proxy.close();
    }
  });

  it("422 missing_blobs: uploads them and retries the commit with the same Idempotency-Key", async () => {
    await writeFile(path.join(root, "m.txt"), "missing at first");
    let faked = false;
    const proxy = await startProxy(server.url, (req) => {
      if (isBlobUpload(req) && !faked) {
        faked = true; // pretend it was stored
        return { kind: "answer", status: 200, body: { stored: [sha256("missing at first")], present: [] } };
      }
      return undefined;
    });
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("m.txt"));
      const result = await session.finish(10_000);
      expect(result).toMatchObject({ commits: 1, pushed: 1, failed: [] });
      const posts = proxy.seen.filter(isCommit);
      expect(posts).toHaveLength(2);
      expect(posts[0]!.headers["idempotency-key"]).toBe(posts[1]!.headers["idempotency-key"]);
      expect(proxy.seen.filter(isBlobUpload)).toHaveLength(2);
      expect((await remoteFiles(server.url, "p1", TOKEN)).get("m.txt")!.toString()).toBe("missing at first");
    } finally {
      await proxy.close();
    }
  });

  it("a pending.json that is a symlink is never ours: a session with only successes leaves it and its target alone", async () => {
    const outside = await tempDir("uspark-outside-");
    try {
      const foreign = JSON.stringify({
        version: 1,
        entries: [
          {
            apiUrl: server.url,
            projectId: "p1",
            path: "a.txt",
            local: path.join(root, "a.txt"),
            reason: "x",
            time: "2025-01-01T00:00:00Z",
          },
        ],
      });
      await writeFile(path.join(outside.dir, "pending.json"), foreign);
      await mkdir(path.join(root, ".uspark"));
      await symlink(path.join(outside.dir, "pending.json"), journalPath(root));
      await writeFile(path.join(root, "a.txt"), "a");
      const session = createSyncSession(options());
      session.add(target("a.txt"));
      const result = await session.finish(10_000);
      expect(result).toMatchObject({ pushed: 1, failed: [], journaled: 0 });
      expect(log.events("journal-failed")).toEqual([]);
      expect(await readFile(path.join(outside.dir, "pending.json"), "utf8")).toBe(foreign);
    } finally {
      await outside.cleanup();
    }
  });

  it("files over maxFileSize are skipped with a hint and not journaled (a retry under the same limit cannot help); symlinks are refused", async () => {
    await writeFile(path.join(root, "huge.bin"), Buffer.alloc(2048));
    await writeFile(path.join(root, "ok.txt"), "fine");
    await symlink("/etc/hostname", path.join(root, "link.txt"));
    const session = createSyncSession(options({ maxFileSize: 1024 }));
    session.add(target("huge.bin"));
    session.add(target("ok.txt"));
    session.add(target("link.txt"));
    const result = await session.finish(10_000);
    expect(result.pushed).toBe(1);
    expect(result.skipped.map((s) => s.remote).sort()).toEqual(["huge.bin", "link.txt"]);
    expect(result.skipped.find((s) => s.remote === "huge.bin")!.reason).toMatch(
      /larger than the 1 KiB limit \(2 KiB\): raise --max-file-size or --ignore it/,
    );
    expect(result.skipped.find((s) => s.remote === "link.txt")!.reason).toMatch(/symlink/);
    expect(log.events("skipped")).toHaveLength(2);
    expect(await readJournal(root)).toEqual([]); // each would be skipped or refused again
    expect(result.journaled).toBe(0);
  });

  it("refuses a file whose directory was swapped for a symlink out of the root", async () => {
    const { dir: outside, cleanup } = await tempDir("uspark-outside-");
    try {
      await writeFile(path.join(outside, "secret.txt"), "do not send");
      await mkdir(path.join(root, "sub"));
      await writeFile(path.join(root, "sub", "secret.txt"), "harmless");
      const t = target("sub/secret.txt"); // approved while sub/ was a real directory
      await rm(path.join(root, "sub"), { recursive: true });
      await symlink(outside, path.join(root, "sub"));
      const session = createSyncSession(options());
      session.add(t);
      const result = await session.finish(10_000);
      expect(result.pushed).toBe(0);
      expect(result.skipped[0]!.reason).toMatch(/outside the project root/);
      expect(server.requests.filter(isBlobUpload)).toHaveLength(0);
    } finally {
      await cleanup();
    }
  });
});

describe("sync session under failures", () => {
  it("503 with Retry-After, then success: waits as told, one commit", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    let failed = 0;
    const proxy = await startProxy(server.url, (req) => {
      if (isCommit(req) && failed++ === 0) {
        return { kind: "answer", status: 503, headers: { "retry-after": "1" }, body: { error: "unavailable", message: "busy" } };
      }
      return undefined;
    });
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      const result = await session.finish(10_000);
      expect(result).toMatchObject({ commits: 1, pushed: 1, failed: [] });
      const posts = proxy.seen.filter(isCommit);
      expect(posts).toHaveLength(2);
      expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(950);
      expect(posts[1]!.headers["idempotency-key"]).toBe(posts[0]!.headers["idempotency-key"]);
      expect(log.events("retry")[0]).toMatchObject({ level: "warn", status: 503 });
      expect(log.events("recovered")).toHaveLength(1);
      expect(await remoteVersion(server.url, "p1", TOKEN)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("stdin ending cuts a long backoff short: the flush tries again at once", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    let failed = 0;
    const proxy = await startProxy(server.url, (req) =>
      isCommit(req) && failed++ === 0 ? { kind: "answer", status: 503, headers: { "retry-after": "30" }, body: {} } : undefined,
    );
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      await eventually(() => log.events("retry").length > 0, 5000, "the first retry");
      const started = Date.now();
      const result = await session.finish(10_000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(result).toMatchObject({ commits: 1, failed: [] });
    } finally {
      await proxy.close();
    }
  });

  it("a connection reset during the commit is retried with the same key; applied once", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    let resets = 0;
    const proxy = await startProxy(server.url, (req) => (isCommit(req) && resets++ < 2 ? { kind: "reset" } : undefined));
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      const result = await session.finish(10_000);
      expect(result.commits).toBe(1);
      const keys = new Set(proxy.seen.filter(isCommit).map((r) => r.headers["idempotency-key"]));
      expect(keys.size).toBe(1);
      expect(await remoteVersion(server.url, "p1", TOKEN)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("an upload stalled past the request timeout is retried", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    let stalled = 0;
    const proxy = await startProxy(server.url, (req) => (isBlobUpload(req) && stalled++ === 0 ? { kind: "stall" } : undefined));
    try {
      const session = createSyncSession(options({ requestTimeoutMs: 300 }, proxy.url));
      session.add(target("a.txt"));
      const result = await session.finish(10_000);
      expect(result).toMatchObject({ commits: 1, pushed: 1 });
      // At least the stalled try and one more (a loaded machine may need a third within 300 ms).
      expect(proxy.seen.filter(isBlobUpload).length).toBeGreaterThanOrEqual(2);
      expect(log.events("retry")[0]!.code).toBe("timeout");
    } finally {
      await proxy.close();
    }
  });

  it("401 stops syncing with one error, makes no more requests, and journals everything", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    await writeFile(path.join(root, "b.txt"), "b");
    const session = createSyncSession(options({ token: "wrong-token" }));
    session.add(target("a.txt"));
    await eventually(() => session.stopped, 5000, "the stop");
    session.add(target("b.txt"));
    const result = await session.finish(10_000);
    expect(result.stopped).toMatch(/401/);
    expect(result.commits).toBe(0);
    expect(result.failed.map((f) => f.remote).sort()).toEqual(["a.txt", "b.txt"]);
    expect(log.records.filter((r) => r.level === "error")).toHaveLength(1);
    expect(log.events("sync-stopped")[0]!.message).toMatch(/rejected the token/);
    expect(server.requests, JSON.stringify(server.requests)).toHaveLength(1);
    const journal = await readJournal(root);
    expect(journal.map((e) => e.path).sort()).toEqual(["a.txt", "b.txt"]);
    expect(journal[0]).toMatchObject({ apiUrl: server.url, projectId: "p1" });
    expect(journal[0]!.local).toBe(path.join(root, journal[0]!.path));
    expect(log.text()).not.toContain("wrong-token");
  });

  it("a redirect is not followed: the other origin never sees the token, syncing stops", async () => {
    const other = await startRecorder();
    const proxy = await startProxy(server.url, (req) => ({ kind: "answer", status: 302, headers: { location: `${other.url}${req.url}` } }));
    try {
      await writeFile(path.join(root, "a.txt"), "a");
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      const result = await session.finish(10_000);
      expect(result.stopped).toContain(other.url);
      expect(other.seen).toHaveLength(0);
      expect(proxy.seen).toHaveLength(1);
      expect(await readJournal(root)).toHaveLength(1);
    } finally {
      await proxy.close();
      await other.close();
    }
  });

  it("retries as long as the session runs, then journals at the finish deadline", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    const proxy = await startProxy(server.url, () => ({ kind: "answer", status: 503, body: { error: "down" } }));
    try {
      const session = createSyncSession(options({}, proxy.url));
      session.add(target("a.txt"));
      await eventually(() => proxy.seen.length >= 10, 5000, "ten attempts");
      expect(session.stopped).toBeUndefined();
      const started = Date.now();
      const result = await session.finish(300);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(result.failed).toEqual([{ remote: "a.txt", reason: "still unsynced when --timeout (300 ms) ran out" }]);
      expect(result.journaled).toBe(1);
      expect((await readJournal(root))[0]!.reason).toMatch(/--timeout/);
      expect(log.events("retry").filter((r) => r.level === "warn")).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("abort() journals what is pending and in flight at once", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    await writeFile(path.join(root, "b.txt"), "b");
    const proxy = await startProxy(server.url, () => ({ kind: "stall" }));
    try {
      const session = createSyncSession(options({ debounceMs: 10_000, maxWaitMs: 10_000 }, proxy.url));
      session.add(target("a.txt"));
      const finishing = session.finish(60_000);
      await eventually(() => proxy.seen.length > 0, 5000, "a request in flight");
      session.add(target("b.txt"));
      const started = Date.now();
      const result = await session.abort();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(result.failed.map((f) => f.remote).sort()).toEqual(["a.txt", "b.txt"]);
      expect((await readJournal(root)).map((e) => e.path).sort()).toEqual(["a.txt", "b.txt"]);
      expect(await finishing).toBe(result);
    } finally {
      await proxy.close();
    }
  });

  it("a later successful sync clears the journal entry", async () => {
    await writeFile(path.join(root, "a.txt"), "a");
    const down = createSyncSession(options({ token: "wrong" }));
    down.add(target("a.txt"));
    await down.finish(5000);
    expect(await readJournal(root)).toHaveLength(1);
    const up = createSyncSession(options());
    up.add(target("a.txt"));
    expect(await up.finish(5000)).toMatchObject({ pushed: 1, journaled: 0 });
    await expect(readFile(journalPath(root))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("requeued: what a round's given-back path is queued as", () => {
  const event = { remote: "a.txt", cause: "Write" };
  const retry = { remote: "a.txt", cause: "retry" };
  const scan = { remote: "a.txt", cause: "scan" };
  it.each([
    ["nothing waits: the event again", event, undefined, event],
    ["a scan's finding waits: the event takes its place (its evidence stays)", event, scan, event],
    ["a newer event waits: that one", event, { remote: "a.txt", cause: "Edit" }, undefined],
    ["a scan's own retry, a scan's finding waits: that one", scan, scan, undefined],
    ["a bare retry over a scan's finding", retry, scan, retry],
  ])("%s", (_name, back, waiting, expected) => {
    expect(requeued(back, waiting)).toEqual(expected);
  });
});
