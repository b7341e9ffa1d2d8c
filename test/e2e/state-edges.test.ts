import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { commitFiles, pullInWorker } from "../kit/remote.js";
import { isCommit, remoteFiles, remoteVersion, startProxy, eventually } from "../kit/sync.js";
import { perTest } from "../kit/fixtures.js";

/**
 * The local state at its edges (issue 43, docs/api.md): two processes on one tree, a push killed
 * after the server applied its commit, a pull killed mid-write, a file replaced in place at the
 * same size and mtime, a copied tree's lock, and a restore's base. Built CLI, reference server.
 */

const TOKEN = "tok-edges";
const t = perTest("uspark-edges-", { server: true });
const env = () => ({ USPARK_TOKEN: TOKEN, USPARK_PROJECT_ID: "p" });
const uspark = (args: string[], apiUrl = t.server!.url) =>
  runCli([...args, "--api-url", apiUrl, "--root", t.root], { cwd: t.root, env: env(), timeoutMs: 30_000 });
const write = (name: string, text: string | Buffer) => writeFileSync(path.join(t.root, name), text);
const remoteText = async (name: string) => (await remoteFiles(t.server!.url, "p", TOKEN)).get(name)?.toString();

/** An edit of a synced file, pushed: it must go through as an edit (exit 0), never as a conflict copy. */
async function editAndPush(names: string | string[], apiUrl?: string): Promise<void> {
  const all = typeof names === "string" ? [names] : names;
  for (const name of all) write(name, `edited ${name}\n`);
  const push = await uspark(["push"], apiUrl);
  expect(push.code, push.stderr).toBe(0);
  expect(push.stderr).not.toContain("conflict");
  for (const name of all) expect(await remoteText(name)).toBe(`edited ${name}\n`);
}

describe("state changes are transactions", () => {
  it("two pushes at once on one tree keep both their base entries: the next edits are no conflicts", async () => {
    write("a.txt", "a\n");
    write("b.txt", "b\n");
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    // The first push's commit waits until the second push has finished: each read the state before the other wrote it.
    const proxy = await startProxy(t.server!.url, (req) =>
      isCommit(req) && !held ? ((held = true), { kind: "forward-after", before: () => released }) : undefined,
    );
    try {
      const first = await startCli(["push", "a.txt", "--api-url", proxy.url, "--root", t.root], {
        cwd: t.root,
        env: env(),
        input: "",
        timeoutMs: 30_000,
      });
      await eventually(() => held, 10_000, "the first push's commit");
      const second = await uspark(["push", "b.txt"], proxy.url);
      expect(second.code, second.stderr).toBe(0);
      release();
      expect((await first.result).code).toBe(0);
      // The base is kept per server address: every command goes through the proxy.
      await editAndPush(["a.txt", "b.txt"], proxy.url);
    } finally {
      await proxy.close();
    }
  });
});

describe("write-ahead intents", () => {
  it("a push SIGKILLed after the server applied its commit, before the answer came: the next edit is no conflict", async () => {
    let stalling = false;
    const proxy = await startProxy(t.server!.url, (req) => (isCommit(req) && stalling ? { kind: "drop", then: "stall" } : undefined));
    try {
      write("a.txt", "a\n");
      expect((await uspark(["push"], proxy.url)).code).toBe(0);
      write("a.txt", "a2\n");
      stalling = true;
      const push = await startCli(["push", "--api-url", proxy.url, "--root", t.root], {
        cwd: t.root,
        env: env(),
        input: "",
        timeoutMs: 30_000,
      });
      await eventually(async () => (await remoteVersion(t.server!.url, "p", TOKEN)) === 2, 10_000, "the commit applied");
      push.child.kill("SIGKILL");
      await push.result;
      stalling = false;
      await editAndPush("a.txt", proxy.url);
    } finally {
      await proxy.close();
    }
  });
});

describe("write-ahead intents on a server without conditional commits (older than API 1.2)", () => {
  /**
   * The reference server made to look older than API 1.2: its listing without "api" and "chain"
   * (taken from it as the test refreshes it), no commit feed. Commits go through; the ones of
   * `stalled` keys never arrive (a push killed while its commit was on the way).
   */
  async function olderServer() {
    let listing: unknown;
    const refresh = async () => {
      const answer = (await (
        await fetch(`${t.server!.url}/api/projects/p/files`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as { version: number; files: unknown[] };
      listing = { version: answer.version, files: answer.files };
    };
    await refresh();
    const keys: string[] = [];
    let stall = false;
    const proxy = await startProxy(t.server!.url, (req) => {
      if (req.method === "GET" && /\/files$/.test(req.url)) return { kind: "answer", status: 200, body: listing };
      if (/\/commits\?/.test(req.url)) return { kind: "answer", status: 404, body: { error: "not_found", message: "no such route" } };
      if (!isCommit(req)) return undefined;
      keys.push(String(req.headers["idempotency-key"]));
      return stall ? { kind: "stall" } : undefined;
    });
    return { proxy, keys, refresh, stallCommits: (on: boolean) => void (stall = on) };
  }

  /** a.txt synced at "a1", then a push of "a2" killed while its commit was on the way (never applied): its intent is on disk. */
  async function killedPush(server: Awaited<ReturnType<typeof olderServer>>): Promise<string> {
    write("a.txt", "a1\n");
    expect((await uspark(["push"], server.proxy.url)).code).toBe(0);
    await server.refresh();
    write("a.txt", "a2\n");
    server.stallCommits(true);
    const push = await startCli(["push", "--api-url", server.proxy.url, "--root", t.root], {
      cwd: t.root,
      env: env(),
      input: "",
      timeoutMs: 30_000,
    });
    await eventually(() => server.keys.length === 2, 10_000, "the second push's commit on the way");
    push.child.kill("SIGKILL");
    await push.result;
    server.stallCommits(false);
    return server.keys[1]!;
  }

  it("an intent whose path another writer changed since is not sent again (it would overwrite that commit): said, decided again", async () => {
    const server = await olderServer();
    try {
      const key = await killedPush(server);
      await commitFiles(t.server!.url, "p", TOKEN, { "a.txt": "theirs\n" });
      await server.refresh();
      const next = await uspark(["push"], server.proxy.url);
      expect(server.keys.slice(2)).not.toContain(key);
      expect(next.stderr).toContain(`(key ${key}) was not sent again: a.txt changed on the server since`);
      expect(await remoteText("a.txt")).toBe("theirs\n");
      expect(readFileSync(path.join(t.root, "a.txt"), "utf8")).toBe("a2\n");
    } finally {
      await server.proxy.close();
    }
  });

  it("an intent whose paths still hold what it expected is sent again under its key, and applied", async () => {
    const server = await olderServer();
    try {
      const key = await killedPush(server);
      const next = await uspark(["push"], server.proxy.url);
      expect(next.code, next.stderr).toBe(0);
      expect(server.keys.slice(2)).toContain(key);
      expect(next.stderr).not.toContain("conflict");
      expect(await remoteText("a.txt")).toBe("a2\n");
    } finally {
      await server.proxy.close();
    }
  });
});

describe("restore records its base", () => {
  it("a local edit after `restore --at` is pushed as an edit, not a conflict", async () => {
    await commitFiles(t.server!.url, "p", TOKEN, { "a.txt": "a1\n" });
    await commitFiles(t.server!.url, "p", TOKEN, { "a.txt": "a2\n" });
    await pullInWorker(t.root, t.server!.url, "p", TOKEN);
    const restored = await uspark(["restore", "a.txt", "--at", "1"]);
    expect(restored.code, restored.stderr).toBe(0);
    await editAndPush("a.txt");
  });
});

describe("the stat base as git keeps it", () => {
  /** a.txt pushed, then replaced in place by `cp -p` of a file of the same size and mtime. */
  async function replacedInPlace(): Promise<void> {
    write("a.txt", "one\n");
    utimesSync(path.join(t.root, "a.txt"), 1_700_000_000, 1_700_000_000);
    expect((await uspark(["push"])).code).toBe(0);
    const other = `${t.root}-other.txt`;
    writeFileSync(other, "two\n");
    utimesSync(other, 1_700_000_000, 1_700_000_000);
    execFileSync("cp", ["-p", other, path.join(t.root, "a.txt")]);
    expect(statSync(path.join(t.root, "a.txt")).mtimeMs).toBe(1_700_000_000_000);
  }

  it("a file replaced by `cp -p` at the same size and mtime is found by status and pushed", async () => {
    await replacedInPlace();
    const status = await uspark(["status", "--short"]);
    expect(status.code, status.stdout.toString()).toBe(1);
    expect(status.stdout.toString()).toContain("a.txt");
    expect((await uspark(["push"])).code).toBe(0);
    expect(await remoteText("a.txt")).toBe("two\n");
  });

  it("a watch's start scan finds it too", async () => {
    await replacedInPlace();
    const watch = await startCli(["watch", "--no-stdin", "--api-url", t.server!.url, "--root", t.root, "--debounce", "50"], { env: env() });
    try {
      await eventually(async () => (await remoteText("a.txt")) === "two\n", 10_000, "the watch to push a.txt");
    } finally {
      watch.child.kill("SIGTERM");
      await watch.result;
    }
  });
});

describe("own temp files", () => {
  it("a pull SIGKILLed mid-write leaves nothing the next pull, status or push takes for the user's", async () => {
    const big = Buffer.alloc(32 << 20, 7);
    await commitFiles(t.server!.url, "p", TOKEN, { "big.bin": big });
    await pullKilledMidWrite();
    const again = await uspark(["pull"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("changed here");
    expect(readdirSync(t.root).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(hasTemp(path.join(t.root, ".uspark", "tmp"))).toBe(false);
    expect((await uspark(["push"])).code).toBe(0);
    expect([...(await remoteFiles(t.server!.url, "p", TOKEN)).keys()]).toEqual(["big.bin"]);
  }, 90_000);
});

const hasTemp = (dir: string) => existsSync(dir) && readdirSync(dir).some((name) => name.endsWith(".tmp"));

/** Whether the process is stopped (SIGSTOP taken: state T in /proc/<pid>/stat). */
function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return /^[Tt]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
}

/**
 * A pull killed while its temp file is there. The kill must land mid-write, which no timing
 * ensures (on a loaded machine the pull wrote and renamed its 32 MiB before a SIGKILL sent on
 * seeing the temp file landed): the pull is stopped (SIGSTOP, waited for), the temp file looked
 * for while it cannot move, then killed. A pull that finished first is undone and tried again.
 */
async function pullKilledMidWrite(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const pull = await startCli(["pull", "--api-url", t.server!.url, "--root", t.root], {
      cwd: t.root,
      env: env(),
      input: "",
      timeoutMs: 60_000,
    });
    let exited = false;
    void pull.result.then(() => (exited = true));
    await eventually(() => exited || hasTemp(t.root) || hasTemp(path.join(t.root, ".uspark", "tmp")), 30_000, "the pull's temp file");
    if (!exited) {
      pull.child.kill("SIGSTOP");
      await eventually(() => exited || isStopped(pull.child.pid!), 10_000, "the pull to stop");
    }
    const midWrite = !exited && (hasTemp(t.root) || hasTemp(path.join(t.root, ".uspark", "tmp")));
    pull.child.kill("SIGKILL");
    await pull.result;
    if (midWrite) return;
    if (attempt === 5) throw new Error("the pull finished its write before it could be stopped, 5 times");
    execFileSync("rm", ["-rf", path.join(t.root, "big.bin"), path.join(t.root, ".uspark")]);
  }
}

describe("the lock names its root", () => {
  it("a watch in a copy of a watched tree (cp -a) takes the copied lock over with one info line", async () => {
    write("a.txt", "a\n");
    const args = (root: string) => ["watch", "--no-stdin", "--api-url", t.server!.url, "--root", root, "--debounce", "50"];
    const first = await startCli(args(t.root), { env: env() });
    await waitForOutput(first.child.stderr, (text) => /watching .* for project p/.test(text), 10_000);
    const copy = `${t.root}-copy`;
    execFileSync("cp", ["-a", t.root, copy]);
    try {
      expect(readFileSync(path.join(copy, ".uspark", "lock"), "utf8")).toContain(String(first.child.pid));
      const second = await startCli(args(copy), { env: env() });
      const said = await waitForOutput(second.child.stderr, (text) => /watching .* for project p|already watching/.test(text), 10_000);
      expect(said).not.toContain("already watching");
      expect(said).toMatch(/took over .*lock/);
      second.child.kill("SIGTERM");
      expect((await second.result).code).toBe(0);
    } finally {
      execFileSync("rm", ["-rf", copy]);
      first.child.kill("SIGTERM");
      await first.result;
    }
  });
});
