import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { commitFiles, pullInWorker } from "../kit/remote.js";
import { writeIn, writersOnOneServer } from "../kit/fixtures.js";

/**
 * The failures of issue 19 ("Many writers, nothing lost"), each through the built CLI against the
 * real server: every one of them lost an edit or got stuck with v0.2, most with exit 0.
 */

const TOKEN = "tok-many-writers";
const writers = writersOnOneServer(TOKEN, "uspark-");
const machine = writers.machine;

const env = writers.env;
const uspark = (cwd: string, ...args: string[]) => runCli([...args, "--log-format", "json"], { cwd, env: env(), timeoutMs: 30_000 });
const remote = writers.remote;
const events = (stderr: string, event: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { event: string; [k: string]: unknown })
    .filter((r) => r.event === event);
const write = writeIn;
const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), "utf8");
const copiesOf = (files: Map<string, string>, stem: string) => [...files].filter(([p]) => p.startsWith(`${stem}.conflict-`));

describe("two writers on one project", () => {
  it("A's push over B's newer edit keeps both: B's stays at the path, A's is a conflict copy (exit 1)", async () => {
    const [a, b] = [await machine("a"), await machine("b")];
    write(a, "x.txt", "v1");
    expect((await uspark(a, "push")).code).toBe(0);
    await pullInWorker(b, writers.server.url, "p", TOKEN); // B's checkout
    write(b, "x.txt", "B's edit");
    expect((await uspark(b, "push")).code).toBe(0);
    write(a, "x.txt", "A's edit");
    const pushed = await uspark(a, "push");
    expect(pushed.code).toBe(1);
    const files = await remote();
    expect(files.get("x.txt")).toBe("B's edit");
    const copies = copiesOf(files, "x");
    expect(copies.map(([, text]) => text)).toEqual(["A's edit"]);
    expect(read(a, "x.txt")).toBe("A's edit");
    expect(events(pushed.stderr, "conflict")).toEqual([expect.objectContaining({ path: "x.txt", copy: copies[0]![0] })]);
  });

  it("A's delete of a file B just edited is not carried out; B's pull keeps B's own unpushed edits", async () => {
    const [a, b] = [await machine("a"), await machine("b")];
    write(a, "y.txt", "y1");
    write(a, "w.txt", "w1");
    expect((await uspark(a, "push")).code).toBe(0);
    await pullInWorker(b, writers.server.url, "p", TOKEN); // B's checkout
    write(b, "y.txt", "B's y");
    expect((await uspark(b, "push")).code).toBe(0);
    rmSync(path.join(a, "y.txt"));
    rmSync(path.join(a, "w.txt"));
    expect((await uspark(a, "push")).code).toBe(0); // w.txt deleted; y.txt: an edit beats a delete
    expect((await remote()).get("y.txt")).toBe("B's y");
    expect((await remote()).has("w.txt")).toBe(false);
    write(b, "w.txt", "B's unpushed w");
    expect((await uspark(b, "pull", "--delete")).code).toBe(0);
    expect(read(b, "w.txt")).toBe("B's unpushed w");
    expect((await uspark(b, "push")).code).toBe(0);
    expect((await remote()).get("w.txt")).toBe("B's unpushed w");
  });
});

describe("a watch that meets a conflict", () => {
  it("says in its summary that it committed a conflict copy, not 0 files in 1 commit", async () => {
    const a = await machine("a");
    await commitFiles(writers.server.url, "p", TOKEN, { "f.txt": "v1" });
    await pullInWorker(a, writers.server.url, "p", TOKEN);
    await commitFiles(writers.server.url, "p", TOKEN, { "f.txt": "theirs" }); // another machine
    write(a, "f.txt", "mine");
    const { child, result } = await startCli(["watch", "--no-stdin", "--log-format", "json", "-v"], {
      cwd: a,
      env: env(),
      timeoutMs: 30_000,
    });
    await waitForOutput(child.stderr, (text) => text.includes('"event":"conflict"'), 20_000);
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code).toBe(1);
    expect(events(done.stderr, "summary").map((e) => e.message)).toEqual([
      expect.stringMatching(/^1 conflict open; 0 files pushed and 1 conflict copy, 0 deleted, \d+ unchanged in 1 commit\.$/),
    ]);
    expect(events(done.stderr, "summary")[0]).toMatchObject({ pushed: 0, copies: 1, commits: 1 });
  });
});

describe("a checkout older than the remote", () => {
  it("pull keeps both (exit 1), and the watch that follows never pushes the stale file over the newer one", async () => {
    const stale = await machine("stale");
    await commitFiles(writers.server.url, "p", TOKEN, { "f.txt": "newer" }); // pushed from another machine
    write(stale, "f.txt", "older");
    const pulled = await uspark(stale, "pull");
    expect(pulled.code).toBe(1);
    expect(read(stale, "f.txt")).toBe("older");
    const { child, result } = await startCli(["watch", "--no-stdin", "--log-format", "json", "-v"], {
      cwd: stale,
      env: env(),
      timeoutMs: 30_000,
    });
    await waitForOutput(child.stderr, (text) => text.includes('"cause":"end"') || text.includes("start scan"), 20_000);
    child.kill("SIGTERM");
    expect((await result).code).toBe(1); // the conflict is still open
    expect((await remote()).get("f.txt")).toBe("newer");
    expect(copiesOf(await remote(), "f").map(([, t]) => t)).toEqual(["older"]);
  });
});

describe("the CI recipe: a fresh checkout, then uspark run --pull, again and again", () => {
  it("passes on the second and third run; a file an earlier run's agent deleted does not come back", async () => {
    const origin = await machine("origin");
    git(origin, "init", "-q", "-b", "main");
    write(origin, "a.txt", "a from git");
    write(origin, "b.txt", "b from git");
    write(origin, "c.txt", "c from git");
    git(origin, "add", "-A");
    git(origin, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
    const agent = path.join(origin, "..", `agent-${path.basename(origin)}.sh`);
    writeFileSync(agent, AGENT);
    writers.removeAfter(async () => rmSync(agent, { force: true }));
    // The project starts as the repository (what a first push from a checkout puts there), as a CI setup would have it.
    await commitFiles(writers.server.url, "p", TOKEN, { "a.txt": "a from git", "b.txt": "b from git", "c.txt": "c from git" });
    for (const [run, edits] of [
      [1, ["edit a.txt run1", "delete b.txt", "edit new.txt run1"]],
      [2, ["edit c.txt run2"]],
      [3, ["edit a.txt run3"]],
    ] as const) {
      const checkout = await machine(`ci-${run}`);
      git(checkout, "clone", "-q", origin, ".");
      const ran = await runCli(["run", "--pull", "--log-format", "json", "--", "sh", agent, ...edits], {
        cwd: checkout,
        env: env(),
        timeoutMs: 30_000,
      });
      expect({ run, code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({ run, code: 0, stderr: "" });
      expect(existsSync(path.join(checkout, "b.txt"))).toBe(false);
    }
    const files = await remote();
    expect(Object.fromEntries(files)).toEqual({ "a.txt": "run3", "c.txt": "run2", "new.txt": "run1" });
  });
});

describe("between sessions", () => {
  it("a file that arrives with an older mtime (cp -p, tar x, rsync -a) is pushed by the next watch", async () => {
    const a = await machine("a");
    write(a, "first.txt", "1");
    expect((await uspark(a, "push")).code).toBe(0);
    const elsewhere = await machine("elsewhere");
    write(elsewhere, "old.txt", "from last year");
    const lastYear = new Date(Date.now() - 365 * 24 * 3600 * 1000);
    utimesSync(path.join(elsewhere, "old.txt"), lastYear, lastYear);
    cpSync(path.join(elsewhere, "old.txt"), path.join(a, "old.txt"), { preserveTimestamps: true });
    const watched = await watchBriefly(a);
    expect(watched.code).toBe(0);
    expect((await remote()).get("old.txt")).toBe("from last year");
  });

  it("mv src lib is no mass delete; a real one is held, stays held in the next watch, and goes with push --force", async () => {
    const a = await machine("a");
    for (let i = 0; i < 20; i++) write(a, `src/f${i}.ts`, `file ${i}`);
    expect((await uspark(a, "push")).code).toBe(0);
    renameSync(path.join(a, "src"), path.join(a, "lib"));
    expect((await watchBriefly(a)).code).toBe(0);
    let files = await remote();
    expect([...files.keys()].filter((p) => p.startsWith("lib/"))).toHaveLength(20);
    expect([...files.keys()].filter((p) => p.startsWith("src/"))).toHaveLength(0);
    rmSync(path.join(a, "lib"), { recursive: true });
    expect((await watchBriefly(a)).code).toBe(1);
    expect((await watchBriefly(a)).code).toBe(1);
    expect([...(await remote()).keys()]).toHaveLength(20);
    expect((await uspark(a, "push")).code).toBe(1);
    expect((await uspark(a, "push", "--force")).code).toBe(0);
    files = await remote();
    expect(files.size).toBe(0);
  });
});

describe("a watch while another writer changes the project", () => {
  it("a local write equal to what the remote held at the start is not taken for 'unchanged': both are kept (exit 1)", async () => {
    const a = await machine("a");
    await commitFiles(writers.server.url, "p", TOKEN, { "f.txt": "X" });
    const { child, result } = await startCli(["watch", "--no-stdin", "--log-format", "json", "-v"], {
      cwd: a,
      env: env(),
      timeoutMs: 30_000,
    });
    await waitForOutput(child.stderr, (text) => text.includes("start scan"), 20_000);
    await commitFiles(writers.server.url, "p", TOKEN, { "f.txt": "Y" }); // the other writer
    write(a, "f.txt", "X");
    await waitForOutput(child.stderr, (text) => text.includes('"event":"conflict"'), 20_000);
    child.kill("SIGTERM");
    expect((await result).code).toBe(1);
    const files = await remote();
    expect(files.get("f.txt")).toBe("Y");
    expect(copiesOf(files, "f").map(([, t]) => t)).toEqual(["X"]);
  });
});

/** A watch of `dir` until its start scan is done and its queue is flushed, then SIGTERM. */
async function watchBriefly(dir: string) {
  const { child, result } = await startCli(["watch", "--no-stdin", "--log-format", "json", "-v", "--debounce", "0"], {
    cwd: dir,
    env: env(),
    timeoutMs: 30_000,
  });
  await waitForOutput(child.stderr, (text) => text.includes("start scan"), 20_000);
  child.kill("SIGTERM");
  return result;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

/**
 * A stand-in agent: "edit <file> <text>" writes, "delete <file>" removes, in the current directory.
 * A shell script: a Node agent would cost each run another Node start (~50 ms of CPU).
 */
const AGENT = `for step do
  set -- $step
  if [ "$1" = delete ]; then rm "$2"; else printf %s "$3" > "$2"; fi
done
`;
