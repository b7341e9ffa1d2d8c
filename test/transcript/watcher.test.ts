import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWatcher } from "../../src/watcher.js";
import { startSessionsServer, type SessionsServer } from "../helpers/sessions-server.js";
import { captureReporter, tempDir } from "../sync/helpers.js";

let root: string;
let cleanup: () => Promise<void>;
let server: SessionsServer;

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-transcript-lib-"));
  server = await startSessionsServer();
});
afterEach(async () => {
  await server.close();
  await cleanup();
});

function watcher(report = captureReporter().reporter) {
  return createWatcher({ root, agent: "claude", fsWatch: false, apiUrl: server.url, projectId: "p1", transcript: true, flushTimeoutMs: 5000, report });
}

describe("the watcher's transcript (library)", () => {
  it("should record raw chunks as they are and SDK messages as NDJSON lines, under the commits' session id", async () => {
    const w = watcher();
    w.write("raw line\r\n");
    w.message({ type: "system", subtype: "init", cwd: root });
    const summary = await w.end();
    const expected = `raw line\r\n${JSON.stringify({ type: "system", subtype: "init", cwd: root })}\n`;
    expect(summary.exitCode).toBe(0);
    expect(summary.transcript).toMatchObject({ state: "sent", bytes: Buffer.byteLength(expected) });
    const [[key, bytes]] = [...server.sessions];
    expect(key).toBe(`p1/${summary.transcript!.sessionId}`);
    expect(bytes!.toString()).toBe(expected);
  });

  it("should spool the transcript and exit 1 when the server refuses the token", async () => {
    server.fault = () => ({ status: 401 });
    const { reporter, events } = captureReporter();
    const w = watcher(reporter);
    w.write("secret prompt\n");
    const summary = await w.end();
    expect(summary.exitCode).toBe(1);
    expect(summary.transcript).toMatchObject({ state: "spooled", sent: 0, bytes: 14 });
    expect(existsSync(path.join(root, ".uspark", `transcript-${summary.transcript!.sessionId}.ndjson`))).toBe(true);
    expect(events("transcript").some((r) => r.level === "error" && /401/.test(r.message))).toBe(true);
  });

  it("should retry a 503 after its Retry-After and send everything once", async () => {
    server.fault = ({ n }) => (n < 2 ? { status: 503, headers: { "retry-after": "0" } } : undefined);
    const w = watcher();
    w.write("one\n");
    const summary = await w.end();
    expect(summary.transcript).toMatchObject({ state: "sent", sent: 4 });
    expect(server.puts.map((put) => put.outcome)).toEqual([503, 503, 200]);
    expect([...server.sessions.values()][0]!.toString()).toBe("one\n");
  });

  it("should send nothing in a dry run", async () => {
    const w = createWatcher({ root, agent: "claude", fsWatch: false, dryRun: true, transcript: true, report: captureReporter().reporter });
    w.write("x\n");
    expect((await w.end()).transcript).toBeUndefined();
    expect(server.puts).toEqual([]);
  });
});
