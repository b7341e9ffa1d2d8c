import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { takeRootLock, thisBoot, withLock } from "../src/state/state-lock.js";
import { MEMORY_TMPDIR } from "./kit/memory-tmpdir.js";

/**
 * Who holds a lock under .uspark/, judged as after a container restart (the same kernel and boot
 * id, pids counted from 1 again: a lock's pid is alive as another process), and a stale lock
 * taken over by two processes at once (only one may hold it).
 */

const STATE_LOCK_MODULE = pathToFileURL(
  path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "state", "state-lock.js"),
).href;

let root: string;
let children: ChildProcess[] = [];
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(MEMORY_TMPDIR, "uspark-lock-")));
  mkdirSync(path.join(root, ".uspark"));
});
afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children = [];
  rmSync(root, { recursive: true, force: true });
});

/** A live process that is not the lock's writer; `uspark` in its command line when it must pass for one. */
function liveStranger(looksLikeUspark = false): number {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ...(looksLikeUspark ? ["uspark"] : [])], { stdio: "ignore" });
  children.push(child);
  return child.pid!;
}

function lockOf(pid: number, fields: { start?: string; dir?: string; boot?: string }): string {
  const stat = statSync(root);
  const lines = [
    `${pid}`,
    ...(fields.start ? [`start ${fields.start}`] : []),
    `root ${root}`,
    `dir ${fields.dir ?? `${stat.dev}:${stat.ino}`}`,
    `boot ${fields.boot ?? thisBoot()}`,
  ];
  return `${lines.join("\n")}\n`;
}

async function eventually(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a state lock whose pid is alive as another process", () => {
  it.each([
    { why: "of an earlier boot", fields: { boot: "00000000-0000-0000-0000-000000000000" } },
    { why: "of a process that started at another time (a container restarted: same boot, pid reused)", fields: { start: "1" } },
    { why: "of another directory (a copy of the tree)", fields: { dir: "1:1" } },
  ])("is taken over at once when it is $why", async ({ fields }) => {
    writeFileSync(path.join(root, ".uspark", "state.json.lock"), lockOf(liveStranger(), fields));
    const started = Date.now();
    expect(await withLock(root, "state.json", async () => "ran", { timeoutMs: 3000 })).toBe("ran");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("is waited for while its holder is the very process that took it", async () => {
    const holder = lockChild("A", false);
    await eventually(() => readLog() === "A in\n", "A to hold the lock");
    await expect(withLock(root, "state.json", async () => "ran", { timeoutMs: 300 })).rejects.toThrow(/held by another uspark process/);
    writeFileSync(path.join(gates(), "release-A"), "");
    expect(await withLock(root, "state.json", async () => "ran", { timeoutMs: 10_000 })).toBe("ran");
    expect(await exitOf(holder)).toBe(0);
  });
});

describe("the root lock after a container restart", () => {
  it("is taken over when its pid is alive as another uspark that started at another time", async () => {
    writeFileSync(path.join(root, ".uspark", "lock"), lockOf(liveStranger(true), { start: "1" }));
    const said: string[] = [];
    const lock = await takeRootLock(root, (why) => said.push(why));
    expect(readFileSync(path.join(root, ".uspark", "lock"), "utf8")).toMatch(new RegExp(`^${process.pid}\n`));
    await lock.release();
    expect(existsSync(path.join(root, ".uspark", "lock"))).toBe(false);
  });
});

function gates(): string {
  const dir = path.join(root, "gates");
  mkdirSync(dir, { recursive: true });
  return dir;
}

function readLog(): string {
  return existsSync(path.join(gates(), "log")) ? readFileSync(path.join(gates(), "log"), "utf8") : "";
}

/**
 * A process that takes `state.json.lock` with withLock, says "<who> in", waits for `release-<who>`,
 * says "<who> out". Paused, it stops at its first check of a holder's pid (process.kill(pid, 0):
 * it has judged the lock it read) until `go-<who>`, and marks each check `<who>-judged-<n>`.
 */
function lockChild(who: string, paused: boolean, lock: "state" | "root" = "state"): ChildProcess {
  const script = `
    import { appendFileSync, existsSync, writeFileSync } from "node:fs";
    const [gates, root, who, paused, kind] = process.argv.slice(1);
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    function waitFile(file) {
      const deadline = Date.now() + 20000;
      while (!existsSync(file)) {
        if (Date.now() > deadline) throw new Error("no " + file);
        Atomics.wait(sleeper, 0, 0, 5);
      }
    }
    if (paused === "paused") {
      const kill = process.kill.bind(process);
      let checks = 0;
      process.kill = (pid, signal) => {
        if (signal === 0 && pid !== process.pid) {
          writeFileSync(gates + "/" + who + "-judged-" + ++checks, "");
          if (checks === 1) waitFile(gates + "/go-" + who);
        }
        return kill(pid, signal);
      };
    }
    const { withLock, takeRootLock } = await import(${JSON.stringify(STATE_LOCK_MODULE)});
    const held = () => {
      appendFileSync(gates + "/log", who + " in\\n");
      waitFile(gates + "/release-" + who);
      appendFileSync(gates + "/log", who + " out\\n");
    };
    if (kind === "state") await withLock(root, "state.json", async () => held(), { timeoutMs: 20000 });
    else {
      try {
        const lock = await takeRootLock(root);
        held();
        await lock.release();
      } catch (error) {
        if (error.name !== "RootLockHeld") throw error;
        appendFileSync(gates + "/log", who + " refused: held by " + error.pid + "\\n");
      }
    }
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, gates(), root, who, paused ? "paused" : "free", lock], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(child);
  return child;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("a stale state lock taken over by two processes at once", () => {
  it("is held by one of them at a time", async () => {
    writeFileSync(path.join(root, ".uspark", "state.json.lock"), "999999999\n"); // no such process
    const b = lockChild("B", true);
    await eventually(() => existsSync(path.join(gates(), "B-judged-1")), "B to judge the lock stale");
    // B has judged the dead process's lock stale and stops before it acts; A takes the lock over.
    const a = lockChild("A", false);
    await eventually(() => readLog() === "A in\n", "A to hold the lock");
    writeFileSync(path.join(gates(), "go-B"), "");
    // B acts on its judgment: it must not take A's lock; it judges again (A is alive) and waits.
    await eventually(() => readLog().includes("B in") || existsSync(path.join(gates(), "B-judged-2")), "B to take the lock or judge again");
    expect(readLog()).toBe("A in\n");
    writeFileSync(path.join(gates(), "release-A"), "");
    await eventually(() => readLog().includes("B in"), "B to hold the lock after A");
    writeFileSync(path.join(gates(), "release-B"), "");
    expect([await exitOf(a), await exitOf(b)]).toEqual([0, 0]);
    expect(readLog()).toBe("A in\nA out\nB in\nB out\n");
  });
});

describe("a stale root lock taken over by two processes at once", () => {
  it("is held by one of them; the other is refused, naming it", async () => {
    writeFileSync(path.join(root, ".uspark", "lock"), "999999999\n"); // no such process
    const b = lockChild("B", true, "root");
    await eventually(() => existsSync(path.join(gates(), "B-judged-1")), "B to judge the lock stale");
    const a = lockChild("A", false, "root");
    await eventually(() => readLog() === "A in\n", "A to hold the lock");
    writeFileSync(path.join(gates(), "go-B"), "");
    expect(await exitOf(b)).toBe(0);
    expect(readLog()).toBe(`A in\nB refused: held by ${a.pid}\n`);
    writeFileSync(path.join(gates(), "release-A"), "");
    expect(await exitOf(a)).toBe(0);
    expect(existsSync(path.join(root, ".uspark", "lock"))).toBe(false);
  });
});
