import { once } from "node:events";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buffer as collect } from "node:stream/consumers";
import { afterAll, describe, expect, it } from "vitest";
import { spawnChild, type SpawnedChild } from "./spawner.js";

const node = (script: string, env?: NodeJS.ProcessEnv, cwd?: string) => spawnChild(process.execPath, ["-e", script], { env, cwd });

const closed = (child: SpawnedChild) => once(child, "close") as Promise<[number | null, NodeJS.Signals | null]>;

const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-spawner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("spawnChild", () => {
  it("hands over every byte a child writes at once, before the worker reads", async () => {
    const child = await node("process.stdout.write(Buffer.alloc(4 << 20, 7)); process.stderr.write('e'.repeat(300000))");
    const [stdout, stderr, [code, signal]] = await Promise.all([collect(child.stdout), collect(child.stderr), closed(child)]);
    expect(stdout.equals(Buffer.alloc(4 << 20, 7))).toBe(true);
    expect(stderr.toString()).toBe("e".repeat(300000));
    expect([code, signal, child.exitCode]).toEqual([0, null, 0]);
  });

  it("keeps what a child writes before the worker has taken its output", async () => {
    const starting = spawnChild("/bin/sh", ["-c", "printf out; printf err >&2"]);
    // The worker busy: the spawner waits for it to take the sockets while the child writes.
    const until = Date.now() + 300;
    while (Date.now() < until);
    const child = await starting;
    const [stdout, stderr] = await Promise.all([collect(child.stdout), collect(child.stderr)]);
    expect([stdout.toString(), stderr.toString()]).toEqual(["out", "err"]);
  });

  it("closes a child that exits at once and writes nothing, however its sockets arrive", async () => {
    // Its stdout can end in the worker before its stderr has arrived: that close must count too.
    // 50 in turn: before the check in Child, one of the first 3 runs here never closed (5 of 5 tries).
    for (let run = 0; run < 50; run++) {
      const child = await spawnChild("/bin/true", []);
      const code = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`run ${run}: no 'close' in 5 s`)), 5000);
        child.once("close", (exitCode) => {
          clearTimeout(timer);
          resolve(exitCode);
        });
      });
      expect(code).toBe(0);
    }
  });

  it("gives the child its stdin, and its end", async () => {
    const child = await node("process.stdin.pipe(process.stdout)");
    const out = collect(child.stdout);
    child.stdin.write("one ");
    child.stdin.end("two");
    expect((await out).toString()).toBe("one two");
    expect((await closed(child))[0]).toBe(0);
  });

  it("runs it in the given directory with the given environment only", async () => {
    const child = await node("console.log(process.cwd(), process.env.ONLY_THIS, process.env.HOME)", { ONLY_THIS: "yes" }, dir);
    expect((await collect(child.stdout)).toString()).toBe(`${realpathSync(dir)} yes undefined\n`);
  });

  it("signals it: 'exit' and 'close' say the signal; kill after the exit is false", async () => {
    const child = await node("setInterval(() => {}, 1000); console.log('up')");
    await once(child.stdout, "data");
    expect(child.kill("SIGTERM")).toBe(true);
    expect(await closed(child)).toEqual([null, "SIGTERM"]);
    expect([child.signalCode, child.killed, child.kill("SIGKILL")]).toEqual(["SIGTERM", true, false]);
  });

  it("leaves the worker the only reader: a reader that goes away ends a child that writes on", async () => {
    // Writes until the write fails, and says how (EAGAIN is a full socket: write again). Were a
    // copy of its stdout left open in the spawner, the child would write on.
    const child = await node(`const fs = require("fs"); const b = Buffer.alloc(65536);
      for (;;) try { fs.writeSync(1, b) } catch (e) { if (e.code !== "EAGAIN") { fs.writeSync(2, e.code); process.exit(3) } }`);
    const stderr = collect(child.stderr);
    await once(child.stdout, "data");
    child.stdout.destroy();
    expect(await closed(child)).toEqual([3, null]);
    // A socket closed with bytes unread resets: either way the writer hears that its reader is gone.
    expect((await stderr).toString()).toMatch(/^(EPIPE|ECONNRESET)$/);
  });

  it("rejects a command that does not exist, as spawn's error", async () => {
    await expect(spawnChild(path.join(dir, "no-such-command"), [])).rejects.toMatchObject({ code: "ENOENT" });
  });
});
