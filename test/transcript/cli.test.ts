import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, startCli } from "../helpers/cli.js";
import { startSessionsServer, type Fault, type SessionsServer } from "../helpers/sessions-server.js";
import { startProxy, startRef, tempDir, waitFor, type Action } from "../sync/helpers.js";

const MiB = 1024 * 1024;
const PEAK_RSS = fileURLToPath(new URL("../../bench/lib/peak-rss.mjs", import.meta.url));

let root: string;
let cleanup: () => Promise<void>;
let server: SessionsServer | undefined;

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-transcript-"));
});
afterEach(async () => {
  server?.release();
  await server?.close();
  server = undefined;
  await cleanup();
});

function watchArgs(url: string, ...extra: string[]): string[] {
  return ["watch-claude", "--project-id", "p1", "--api-url", url, "--root", root, "--no-fs-watch", "--transcript", ...extra];
}

function pushPending(url: string) {
  return runCli(["push", "--pending", "--project-id", "p1", "--api-url", url, "--root", root, "--flush-timeout", "10000"], { timeoutMs: 60_000 });
}

/** A stream in pieces that holds what a transcript must keep: CRLF, invalid UTF-8, a 3 MiB line, no final newline. */
function awkwardStream(): Buffer[] {
  return [
    Buffer.from('{"type":"system","subtype":"init","cwd":"/w"}\r\n{"type":"assistant"}\r\n'),
    Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a]),
    Buffer.concat([Buffer.from('{"type":"user","big":"'), Buffer.alloc(3 * MiB, "y"), Buffer.from('"}\n')]),
    Buffer.from("plain text\n"),
    Buffer.from('{"type":"result"} and no newline at the end'),
  ];
}

/** The one session's bytes on the server. */
function onlySession(srv: SessionsServer): Buffer {
  expect(srv.sessions.size).toBe(1);
  return [...srv.sessions.values()][0]!;
}

function spoolFiles(): string[] {
  const dir = path.join(root, ".uspark");
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith("transcript-")) : [];
}

/** Writes the pieces one by one, each after the server has seen one more PUT: the session spans many appends. */
async function feedAcrossAppends(child: ReturnType<typeof startCli>["child"], srv: SessionsServer, pieces: Buffer[]): Promise<void> {
  for (const piece of pieces) {
    const seen = srv.puts.length;
    child.stdin.write(piece);
    await waitFor(() => srv.puts.length > seen, 20_000, "the next PUT");
  }
}

describe("--transcript against the reference server", () => {
  it("should store the stream byte for byte through answers dropped after the append and resets, and list the session", async () => {
    const ref = await startRef();
    const actions: Action[] = [{ kind: "drop" }, { kind: "forward" }, { kind: "reset" }, { kind: "drop", then: "half" }, { kind: "drop" }];
    let puts = 0;
    const proxy = await startProxy(ref.url, (req) => (req.method === "PUT" && req.url.includes("/sessions/") ? actions[puts++] : undefined));
    try {
      const pieces = awkwardStream();
      const run = startCli(watchArgs(proxy.url), { timeoutMs: 60_000 });
      for (const piece of pieces) {
        const seen = puts;
        run.child.stdin.write(piece);
        await waitFor(() => puts > seen, 20_000, "the next PUT");
      }
      run.child.stdin.end();
      const result = await run.result;
      const input = Buffer.concat(pieces);
      expect(result.code).toBe(0);
      expect(result.stdout.equals(input)).toBe(true);

      const listing = (await (await fetch(`${ref.url}/api/projects/p1/sessions`)).json()) as { sessions: { id: string; length: number }[] };
      expect(listing.sessions).toEqual([expect.objectContaining({ length: input.length })]);
      const stored = Buffer.from(await (await fetch(`${ref.url}/api/projects/p1/sessions/${listing.sessions[0]!.id}/events`)).arrayBuffer());
      expect(stored.equals(input)).toBe(true);
      expect(spoolFiles()).toEqual([]);
    } finally {
      await proxy.close();
      await ref.stop();
    }
  });
});

describe("--transcript", () => {
  it("should store the stream byte for byte across connection resets and answers dropped after the append", async () => {
    server = await startSessionsServer();
    // Applied but unanswered (the retry meets an identical append or a 409), then a plain reset.
    const faults: Record<number, Fault> = { 0: "apply-then-reset", 2: "reset", 4: "apply-then-reset", 5: "apply-then-reset", 7: "reset" };
    server.fault = ({ n }) => faults[n];
    const pieces = awkwardStream();
    const run = startCli(watchArgs(server.url), { timeoutMs: 60_000 });
    await feedAcrossAppends(run.child, server, pieces);
    run.child.stdin.end();
    const result = await run.result;

    const input = Buffer.concat(pieces);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout.equals(input)).toBe(true);
    expect(onlySession(server).equals(input)).toBe(true);
    expect(server.puts.filter((put) => put.outcome === "apply-then-reset").length).toBeGreaterThanOrEqual(2);
    expect(spoolFiles()).toEqual([]);
  });

  it.each([
    ["refuses every connection", "reset"],
    ["applies the last appends but never answers them", "apply-then-reset"],
  ] as const)("should exit 1 with the rest spooled when the server %s at the end, and push --pending completes it", async (_what, fault) => {
    server = await startSessionsServer();
    const pieces = awkwardStream();
    const run = startCli(watchArgs(server.url, "--flush-timeout", "1500"), { timeoutMs: 60_000 });
    await feedAcrossAppends(run.child, server, pieces.slice(0, 2));
    server.fault = () => fault;
    // Appended one by one: with answers lost, the server ends up ahead of what the client knows.
    await feedAcrossAppends(run.child, server, pieces.slice(2));
    run.child.stdin.end();
    const first = await run.result;

    const input = Buffer.concat(pieces);
    expect(first.stdout.equals(input)).toBe(true);
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/bytes not sent .*uspark push --pending/);
    expect(spoolFiles().length).toBe(2);

    server.fault = () => undefined;
    const second = await pushPending(server.url);
    expect(second.stderr).toMatch(/transcript of session \S+ sent/);
    expect(second.code).toBe(0);
    expect(onlySession(server).equals(input)).toBe(true);
    expect(spoolFiles()).toEqual([]);
    // The push started from the acknowledged offset, behind the server: it resumed from a 409's length.
    if (fault === "apply-then-reset") expect(server.puts.some((put) => put.outcome === 409)).toBe(true);
  });

  it("should give one notice and exit 0 against a v1 server (404 on the sessions route)", async () => {
    server = await startSessionsServer({ v1: true });
    const input = Buffer.concat(awkwardStream());
    const result = await runCli(watchArgs(server.url), { input, timeoutMs: 30_000 });
    expect(result.code).toBe(0);
    expect(result.stdout.equals(input)).toBe(true);
    expect(result.stderr.match(/does not take transcripts/g)).toHaveLength(1);
    expect(result.stderr).not.toMatch(/error/i);
    expect(spoolFiles()).toEqual([]);
  });

  it("should send nothing without --transcript", async () => {
    server = await startSessionsServer();
    const input = Buffer.concat(awkwardStream());
    const result = await runCli(watchArgs(server.url).filter((arg) => arg !== "--transcript"), { input, timeoutMs: 30_000 });
    expect(result.code).toBe(0);
    expect(server.puts).toEqual([]);
  });

  it("should pass 64 MiB through at full speed while the server stalls, with bounded memory, and spool it all", async () => {
    server = await startSessionsServer();
    server.fault = () => "stall";
    const line = Buffer.alloc(MiB - 1, "z");
    const pieces = Array.from({ length: 64 }, (_, i) => Buffer.concat([Buffer.from(String(i % 10)), line.subarray(1), Buffer.from("\n")]));
    const input = Buffer.concat(pieces);
    const rssFile = path.join(root, "rss");
    const run = startCli(watchArgs(server.url, "--flush-timeout", "3000", "--request-timeout", "60000"), {
      input: pieces,
      timeoutMs: 60_000,
      env: { NODE_OPTIONS: `--import=${PEAK_RSS}`, USPARK_BENCH_RSS_FILE: rssFile },
    });
    let stdoutBytes = 0;
    let stdoutCompleteWhileRunning = false;
    run.child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes === input.length) stdoutCompleteWhileRunning = run.child.exitCode === null;
    });
    const result = await run.result;

    expect(result.stdout.equals(input)).toBe(true);
    // All of stdout was out while the transcript still waited for the stalled server.
    expect(stdoutCompleteWhileRunning).toBe(true);
    expect(result.code).toBe(1);
    const peak = Number(readFileSync(rssFile, "utf8"));
    expect(peak).toBeLessThan(160 * MiB);

    server.release();
    const pushed = await pushPending(server.url);
    expect(pushed.code).toBe(0);
    expect(onlySession(server).equals(input)).toBe(true);
  }, 90_000);
});
