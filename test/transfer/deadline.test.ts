// Defect 18: a server that answers one byte at a time must not hold `uspark push` forever. Every
// request has a hard deadline, and the flush's deadline is not extended by a small request that
// trickles (idle timeouts alone never fire: a byte keeps arriving).

import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { idleDeadline, requestDeadline } from "../../src/transfer/deadline.js";
import { runCli } from "../kit/cli.js";
import { cliEnv, newToken, workspace } from "../reliability/harness.js";
import { remoteFiles, startRef, startSlowReader } from "../kit/sync.js";

/** Answers every request with 200 and headers at once, then one space every `everyMs`, never ending. */
async function startDripServer(everyMs: number) {
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setInterval>>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.write("{");
    const timer = setInterval(() => res.write(" "), everyMs);
    timers.add(timer);
    res.on("close", () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let ws: Awaited<ReturnType<typeof workspace>>;
let drip: Awaited<ReturnType<typeof startDripServer>>;

beforeEach(async () => {
  ws = await workspace("uspark-drip-");
  drip = await startDripServer(200);
});

afterEach(async () => {
  await drip.close();
  await ws.cleanup();
});

describe("push against a server that trickles its answers", () => {
  it("gives up once the server has not answered for the flush timeout, exit 1", async () => {
    await writeFile(path.join(ws.root, "a.txt"), "a\n");
    const started = Date.now();
    const result = await runCli(
      ["push", "--project-id", "drip", "--api-url", drip.url, "--root", ws.root, "--request-timeout", "2000", "--flush-timeout", "1500"],
      { cwd: ws.root, env: cliEnv(ws.home, newToken()), timeoutMs: 30_000 },
    );
    const seconds = (Date.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("push failed: the server has not answered for 1500 ms");
    // The flush timeout plus the process's start and the journal write; far from "forever".
    expect(seconds).toBeLessThan(15);
    expect(drip.requests).toBeGreaterThan(0);
  });
});

describe("push over a slow but steady uplink", () => {
  it("sends a file that takes longer than --request-timeout and --flush-timeout to upload, within its own deadline", async () => {
    const server = await startRef();
    // 1 MiB/s: the 2 MiB file takes about 2 s to send; its deadline at the slowest allowed
    // rate is 8 s. The request and flush timeouts (800 ms) are far shorter than the upload.
    const slow = await startSlowReader(server.url, 1024 * 1024);
    try {
      const bytes = randomBytes(2 * 1024 * 1024);
      await writeFile(path.join(ws.root, "big.bin"), bytes);
      const result = await runCli(
        ["push", "--project-id", "p1", "--api-url", slow.url, "--root", ws.root, "--request-timeout", "800", "--flush-timeout", "800"],
        { cwd: ws.root, env: cliEnv(ws.home, newToken()), timeoutMs: 30_000 },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/retrying/);
      expect((await remoteFiles(server.url)).get("big.bin")?.equals(bytes)).toBe(true);
      // The upload really outlasted both timeouts.
      const upload = slow.reads.find((read) => read.bytes >= bytes.length);
      expect(upload?.ms).toBeGreaterThan(1000);
    } finally {
      await slow.close();
      await server.stop();
    }
  });
});

/** Each test of the calling describe runs on vitest's fake clock. */
function useFakeTimersInEachTest(): void {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());
}

describe("idleDeadline", () => {
  useFakeTimersInEachTest();

  it("does not count time when no request is under way (local work is not the server's silence)", () => {
    const expire = vi.fn();
    let waiting = false;
    idleDeadline({ timeoutMs: 1000, waiting: () => waiting, expire });
    vi.advanceTimersByTime(5000);
    expect(expire).not.toHaveBeenCalled();
    waiting = true;
    vi.advanceTimersByTime(1000);
    expect(expire).toHaveBeenCalledTimes(1);
  });

  it("expires once, the timeout after the last progress", () => {
    const expire = vi.fn();
    const deadline = idleDeadline({ timeoutMs: 1000, expire });
    vi.advanceTimersByTime(900);
    deadline.progress();
    vi.advanceTimersByTime(900);
    expect(expire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(expire).toHaveBeenCalledTimes(1);
    deadline.progress(); // too late: it stays expired
    vi.advanceTimersByTime(5000);
    expect(expire).toHaveBeenCalledTimes(1);
  });

  it("waits for a large transfer's own deadline, unless extending is not allowed now", () => {
    const expire = vi.fn();
    let until: number | undefined = Date.now() + 3000;
    let allowed = true;
    idleDeadline({ timeoutMs: 1000, longTransferDeadline: () => until, extendWhile: () => allowed, expire });
    vi.advanceTimersByTime(2999);
    expect(expire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expire).toHaveBeenCalledTimes(1);

    const refused = vi.fn();
    until = Date.now() + 3000;
    allowed = false;
    idleDeadline({ timeoutMs: 1000, longTransferDeadline: () => until, extendWhile: () => allowed, expire: refused });
    vi.advanceTimersByTime(1000);
    expect(refused).toHaveBeenCalledTimes(1);
  });

  it("never expires once stopped", () => {
    const expire = vi.fn();
    idleDeadline({ timeoutMs: 1000, expire }).stop();
    vi.advanceTimersByTime(5000);
    expect(expire).not.toHaveBeenCalled();
  });
});

describe("requestDeadline", () => {
  useFakeTimersInEachTest();

  it("aborts when time is up, and says it was time", () => {
    const deadline = requestDeadline(undefined, 1000);
    vi.advanceTimersByTime(999);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(true);
    expect(deadline.signal.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("aborts with the caller's reason when the caller aborts, before or during the request", () => {
    const caller = new AbortController();
    const during = requestDeadline(caller.signal, 1000);
    caller.abort(new Error("interrupted"));
    expect(during.signal.reason).toEqual(new Error("interrupted"));
    expect(during.expired).toBe(false);
    expect(requestDeadline(caller.signal, 1000).signal.reason).toEqual(new Error("interrupted"));
  });

  it("leaves nothing behind once disposed: no abort later, no listener on the caller's lifelong signal", () => {
    const session = new AbortController();
    const deadlines = Array.from({ length: 5 }, () => requestDeadline(session.signal, 1000));
    for (const deadline of deadlines) deadline.dispose();
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
    vi.advanceTimersByTime(5000);
    session.abort();
    expect(deadlines.some((deadline) => deadline.signal.aborted)).toBe(false);
  });
});
