import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWatcher } from "../../src/watcher/watcher.js";
import { captureReporter, tempDir } from "../kit/sync.js";
import {
  answer,
  isSessionsRoute,
  isTranscriptPut,
  listedSessions,
  onPuts,
  storedSessions,
  useServed,
  v1Sessions,
} from "../kit/transcript.js";

let root: string;
let cleanup: () => Promise<void>;
const serve = useServed();

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-transcript-lib-"));
});
afterEach(async () => {
  await cleanup();
});

function watcher(apiUrl: string, report = captureReporter().reporter, token?: string) {
  return createWatcher({
    root,
    agent: "claude",
    fsWatch: false,
    apiUrl,
    token,
    projectId: "p1",
    transcript: true,
    flushTimeoutMs: 5000,
    report,
  });
}

describe("the watcher's transcript (library)", () => {
  it("should record raw chunks as they are and SDK messages as NDJSON lines, under the commits' session id", async () => {
    const { ref, proxy } = await serve();
    const w = watcher(proxy.url);
    w.write("raw line\r\n");
    w.message({ type: "system", subtype: "init", cwd: root });
    const summary = await w.end();
    const expected = `raw line\r\n${JSON.stringify({ type: "system", subtype: "init", cwd: root })}\n`;
    expect(summary.exitCode).toBe(0);
    expect(summary.transcript).toMatchObject({ state: "sent", bytes: Buffer.byteLength(expected) });
    // Project p1 holds one session, under the id the commits carry.
    const [session, ...others] = await storedSessions(ref.url, "p1");
    expect(others).toEqual([]);
    expect(session!.id).toBe(summary.transcript!.sessionId);
    expect(session!.bytes.toString()).toBe(expected);
  });

  it("should give the commits the transcript's session id", async () => {
    const { ref, proxy } = await serve();
    const w = watcher(proxy.url);
    for (const name of ["a.txt", "b.txt"]) {
      writeFileSync(path.join(root, name), name);
      w.message({
        type: "assistant",
        message: { content: [{ type: "tool_use", id: name, name: "Write", input: { file_path: path.join(root, name), content: name } }] },
      });
      w.message({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: name, content: "ok" }] } });
    }
    const summary = await w.end();
    expect(summary.exitCode).toBe(0);
    const feed = (await (await fetch(`${ref.url}/api/projects/p1/commits`)).json()) as { commits: { source?: { sessionId?: string } }[] };
    expect(feed.commits.length).toBeGreaterThan(0);
    expect(new Set(feed.commits.map((commit) => commit.source?.sessionId))).toEqual(new Set([summary.transcript!.sessionId]));
  });

  it("should spool the transcript and exit 1 when the server refuses the token", async () => {
    const { ref, proxy } = await serve({ token: "the-servers-token" });
    const { reporter, events } = captureReporter();
    const w = watcher(proxy.url, reporter, "a-wrong-token");
    w.write("secret prompt\n");
    const summary = await w.end();
    expect(summary.exitCode).toBe(1);
    expect(summary.transcript).toMatchObject({ state: "spooled", sent: 0, bytes: 14 });
    expect(existsSync(path.join(root, ".uspark", `transcript-${summary.transcript!.sessionId}.ndjson`))).toBe(true);
    expect(events("transcript").some((r) => r.level === "error" && /401/.test(r.message))).toBe(true);
    // It was the server that refused: the appends reached it and it answered 401.
    expect(proxy.delivered.filter(isTranscriptPut).map((a) => a.status)).toEqual([401]);
    expect(await storedSessions(ref.url, "p1", "the-servers-token")).toEqual([]);
  });

  it("should have a writer faster than the spool wait, and keep all it wrote", async () => {
    const { ref, proxy } = await serve({ keepBodies: false });
    const w = watcher(proxy.url);
    const MiB = 1024 * 1024;
    const line = Buffer.alloc(MiB, "x");
    line[MiB - 1] = 0x0a;
    // 24 MiB at once: past 8 MiB unsent it spools, and past 16 MiB a writer that did not wait
    // would lose the rest.
    let waits = 0;
    for (let i = 0; i < 24; i++) {
      const wait = w.write(line);
      if (wait) {
        waits++;
        await wait;
      }
    }
    const summary = await w.end();
    expect(waits).toBeGreaterThan(0);
    expect(summary.transcript).toMatchObject({ state: "sent", bytes: 24 * MiB, sent: 24 * MiB });
    expect(summary.exitCode).toBe(0);
    expect(await listedSessions(ref.url)).toEqual([{ id: summary.transcript!.sessionId, length: 24 * MiB }]);
  });

  it("should let a writer held by the spool go on while the spool still writes the backlog", async () => {
    const { ref } = await serve({ keepBodies: false });
    const w = watcher(ref.url);
    const MiB = 1024 * 1024;
    // 15 MiB at once, under the 16 MiB a writer may run ahead: past 8 MiB it spools and is held.
    let held: Promise<void> | void = undefined;
    for (let i = 0; i < 15; i++) held = w.write(Buffer.alloc(MiB, "y"));
    expect(held).toBeInstanceOf(Promise);
    await held;
    // Let go once the queue is back under half its mark, not once all 15 MiB are on disk: the
    // stream and the spool go on side by side.
    const [spool] = readdirSync(path.join(root, ".uspark")).filter((name) => name.endsWith(".ndjson"));
    expect(statSync(path.join(root, ".uspark", spool!)).size).toBeLessThan(15 * MiB);
    const summary = await w.end();
    expect(summary.transcript).toMatchObject({ state: "sent", bytes: 15 * MiB, sent: 15 * MiB });
  });

  it("should drop the transcript quietly when a v1 server answers while a burst is being spooled", async () => {
    const { proxy } = await serve({ rule: v1Sessions, keepBodies: false });
    const { reporter, events } = captureReporter();
    const w = watcher(proxy.url, reporter);
    const MiB = 1024 * 1024;
    const line = Buffer.alloc(MiB, "x");
    line[MiB - 1] = 0x0a;
    // A burst longer than the first append's wait (250 ms): the 404 comes while the spool is being written.
    const until = Date.now() + 1000;
    while (Date.now() < until) {
      for (let i = 0; i < 4; i++) await w.write(line);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const summary = await w.end();
    expect(summary.transcript?.state).toBe("not-supported");
    expect(summary.exitCode).toBe(0);
    expect(events("transcript").filter((r) => r.level === "error")).toEqual([]);
    expect(existsSync(path.join(root, ".uspark", `transcript-${summary.transcript!.sessionId}.ndjson`))).toBe(false);
  });

  it("should retry a 503 after its Retry-After and send everything once", async () => {
    const { ref, proxy } = await serve({ rule: onPuts((n) => (n < 2 ? answer(503, { "retry-after": "0" }) : undefined)).rule });
    const w = watcher(proxy.url);
    w.write("one\n");
    const summary = await w.end();
    expect(summary.transcript).toMatchObject({ state: "sent", sent: 4 });
    expect(proxy.delivered.filter(isTranscriptPut).map((a) => a.status)).toEqual([503, 503, 200]);
    const sessions = await storedSessions(ref.url);
    expect(sessions.map((s) => s.bytes.toString())).toEqual(["one\n"]);
  });

  it("should send nothing in a dry run", async () => {
    const { ref, proxy } = await serve();
    const w = createWatcher({
      root,
      agent: "claude",
      fsWatch: false,
      dryRun: true,
      apiUrl: proxy.url,
      projectId: "p1",
      transcript: true,
      report: captureReporter().reporter,
    });
    w.write("x\n");
    expect((await w.end()).transcript).toBeUndefined();
    expect(proxy.seen.filter(isSessionsRoute).map((req) => `${req.method} ${req.url}`)).toEqual([]);
    expect(await storedSessions(ref.url)).toEqual([]);
  });
});
