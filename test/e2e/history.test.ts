import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { CLI, runCli, startCli } from "../kit/cli.js";
import { commitFiles, pullInWorker } from "../kit/remote.js";
import { remoteCommits, remoteFiles, remoteVersion, startProxy } from "../kit/sync.js";
import { perDescribe, perTest, type PerTest } from "../kit/fixtures.js";

/** `uspark log`, `ls`, `cat` and `restore` through the built CLI against the reference server. */

const TOKEN = "tok-history";
const PREFIX = "uspark-cli-history-";
const envOf = (f: PerTest) => ({ USPARK_API_URL: f.server!.url, USPARK_TOKEN: TOKEN, USPARK_PROJECT_ID: "p" });
const usparkIn =
  (f: PerTest) =>
  (args: string[], cwd = f.root) =>
    runCli(args, { cwd, env: envOf(f), timeoutMs: 30_000 });
const commitTo = (f: PerTest) => (files: Record<string, string | Buffer | null>) => commitFiles(f.server!.url, "p", TOKEN, files);

/** Three versions: 1 adds a.txt and src/b.ts, 2 edits a.txt, 3 deletes src/b.ts. */
async function threeVersions(f: PerTest): Promise<void> {
  const commit = commitTo(f);
  await commit({ "a.txt": "a1\n", "src/b.ts": "b1\n" });
  await commit({ "a.txt": "a2\n" });
  await commit({ "src/b.ts": null });
}

/** `threeVersions`, then pulled into the root: the local tree a restore works on. */
async function threeVersionsPulled(f: PerTest): Promise<void> {
  await threeVersions(f);
  await pullInWorker(f.root, f.server!.url, "p", TOKEN);
}

// log, ls and cat only read the remote: their tests share one project at version 3, and an empty root.
describe("a project at version 3", () => {
  const v3 = perDescribe(PREFIX, { server: true });
  beforeAll(() => threeVersions(v3));
  const uspark = usparkIn(v3);

  describe("uspark log", () => {
    it("lists commits newest first with version, time, agent and paths; -n limits; a path filters; --json", async () => {
      const all = await uspark(["log"]);
      expect(all.code, all.stderr).toBe(0);
      expect(all.stdout.toString()).toMatch(
        /^version 3 {2}\S+Z {2}test\n {2}delete src\/b\.ts\nversion 2 .*\n {2}put {4}a\.txt\nversion 1 .*\n {2}put {4}a\.txt\n {2}put {4}src\/b\.ts\n$/,
      );
      const last = await uspark(["log", "-n", "1"]);
      expect(last.stdout.toString()).toMatch(/^version 3 [^\n]*\n {2}delete src\/b\.ts\n$/);
      const json = await uspark(["log", "--json", path.join("src", "b.ts")]);
      const parsed = JSON.parse(json.stdout.toString()) as {
        format: number;
        version: number;
        commits: { version: number; changes: { path: string }[] }[];
      };
      expect(parsed.format).toBe(1);
      expect(parsed.commits.map((c) => c.version)).toEqual([3, 1]);
      expect(parsed.commits.flatMap((c) => c.changes.map((ch) => ch.path))).toEqual(["src/b.ts", "src/b.ts"]);
    });

    it("a path is relative to the current directory", async () => {
      mkdirSync(path.join(v3.root, "src"), { recursive: true });
      const fromSrc = await uspark(["log", "--root", v3.root, "b.ts", "--json"], path.join(v3.root, "src"));
      expect(fromSrc.code, fromSrc.stderr).toBe(0);
      expect((JSON.parse(fromSrc.stdout.toString()) as { commits: unknown[] }).commits).toHaveLength(2);
    });
  });

  describe("uspark ls and cat", () => {
    it("ls lists the files now and at a version; cat writes a file's bytes at a version", async () => {
      expect((await uspark(["ls"])).stdout.toString()).toBe("a.txt\n");
      expect((await uspark(["ls", "--at", "1"])).stdout.toString()).toBe("a.txt\nsrc/b.ts\n");
      const old = await uspark(["cat", "a.txt", "--at", "1"]);
      expect(old.code, old.stderr).toBe(0);
      expect(old.stdout.toString()).toBe("a1\n");
      expect((await uspark(["cat", "a.txt"])).stdout.toString()).toBe("a2\n");
      expect((await uspark(["cat", "src/b.ts", "--at", "2"])).stdout.toString()).toBe("b1\n");
    });

    it("cat of a path absent at that version is exit 1, and says where it was; a version past the head is exit 2", async () => {
      const absent = await uspark(["cat", "src/b.ts"]);
      expect(absent.code).toBe(1);
      expect(absent.stderr).toContain(
        "src/b.ts does not exist at version 3: deleted in version 3 (`uspark cat src/b.ts --at 2` shows it before)",
      );
      const directory = await uspark(["cat", "src", "--at", "2"]);
      expect(directory.code).toBe(1);
      expect(directory.stderr).toContain("src is a directory at version 2, not a file");
      expect((await uspark(["cat", "nope.txt", "--at", "2"])).stderr).toContain(
        "nope.txt does not exist at version 2: no commit has written it",
      );
      const future = await uspark(["ls", "--at", "9"]);
      expect(future.code).toBe(2);
      expect(future.stderr).toContain("--at 9: the project is at version 3");
    });
  });
});

// The tests below change the remote or the root: each has its own.
describe("a project of the test's own", () => {
  const t = perTest(PREFIX, { server: true });
  const env = () => envOf(t);
  const uspark = usparkIn(t);
  const commit = commitTo(t);

  describe("uspark log with nothing to list", () => {
    it("says so on stderr (a person at a terminal saw nothing at all), stdout empty for a script, exit 0", async () => {
      const empty = await uspark(["log"]);
      expect(empty.code, empty.stderr).toBe(0);
      expect(empty.stdout.toString()).toBe("");
      expect(empty.stderr).toBe("uspark: no commits yet in p\n");
      await commit({ "a.txt": "a\n" });
      const untouched = await uspark(["log", "b.txt"]);
      expect([untouched.code, untouched.stdout.toString(), untouched.stderr]).toEqual([0, "", "uspark: no commit has touched b.txt\n"]);
      const json = await uspark(["log", "b.txt", "--json"]);
      expect([json.stderr, (JSON.parse(json.stdout.toString()) as { commits: unknown[] }).commits]).toEqual(["", []]);
    });
  });

  describe("uspark cat into a pipe or a file that breaks", () => {
    it("a reader that goes away is no error (exit 0, no stack trace); a full disk is exit 74", async () => {
      await commit({ "big.bin": Buffer.alloc(4 << 20, 7) });
      const early = await startCli(["cat", "big.bin"], { cwd: t.root, env: env(), timeoutMs: 30_000 });
      // `| head -c 1`: the reader takes one chunk and goes away.
      early.child.stdout.once("data", () => early.child.stdout.destroy());
      const closed = await early.result;
      expect(closed.stderr).toBe("");
      expect(closed.code).toBe(0);
      const full = openSync("/dev/full", "w");
      try {
        const child = spawn(process.execPath, [CLI, "cat", "big.bin"], {
          cwd: t.root,
          env: { ...process.env, ...env() },
          stdio: ["ignore", full, "pipe"],
        });
        const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
        expect(code).toBe(74);
      } finally {
        closeSync(full);
      }
    });
  });

  describe("uspark restore", () => {
    it("commits the old content back with its expectation, and writes it here; a deleted file comes back", async () => {
      await threeVersionsPulled(t);
      const restored = await uspark(["restore", "a.txt", "src", "--at", "1"]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toContain("restored 2 paths as at version 1 in version 4");
      const remote = await remoteFiles(t.server!.url, "p", TOKEN);
      expect(remote.get("a.txt")?.toString()).toBe("a1\n");
      expect(remote.get("src/b.ts")?.toString()).toBe("b1\n");
      expect(readFileSync(path.join(t.root, "a.txt"), "utf8")).toBe("a1\n");
      expect(readFileSync(path.join(t.root, "src/b.ts"), "utf8")).toBe("b1\n");
      const status = await uspark(["status", "--short"]);
      expect(status.code, status.stdout.toString()).toBe(0);
      const [last, ...more] = await remoteCommits(t.server!.url, "p", TOKEN, 3);
      expect(more).toEqual([]);
      expect(last!.source?.agent).toBe("restore");
      expect(last!.changes.map((c) => c.expect)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), null]);
    });

    it("a local edit of a restored file is kept under .uspark/backup/ first", async () => {
      await threeVersionsPulled(t);
      writeFileSync(path.join(t.root, "a.txt"), "mine\n");
      const restored = await uspark(["restore", "a.txt", "--at", "1"]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(readFileSync(path.join(t.root, "a.txt"), "utf8")).toBe("a1\n");
      const [stamp] = readdirSync(path.join(t.root, ".uspark", "backup"));
      expect(readFileSync(path.join(t.root, ".uspark", "backup", stamp!, "a.txt"), "utf8")).toBe("mine\n");
    });

    it("another writer between the look and the commit: nothing applied, exit 1, said plainly", async () => {
      await threeVersionsPulled(t);
      let raced = false;
      const proxy = await startProxy(t.server!.url, (req) => {
        if (raced || req.method !== "POST" || !/\/commits$/.test(req.url)) return undefined;
        raced = true;
        return { kind: "forward-after", before: async () => void (await commit({ "a.txt": "someone else\n" })) };
      });
      try {
        const restore = await runCli(["restore", "a.txt", "--at", "1", "--api-url", proxy.url], {
          cwd: t.root,
          env: env(),
          timeoutMs: 30_000,
        });
        expect(restore.code).toBe(1);
        expect(restore.stderr).toContain("the remote changed in the meantime; nothing was applied");
      } finally {
        await proxy.close();
      }
      expect((await remoteFiles(t.server!.url, "p", TOKEN)).get("a.txt")?.toString()).toBe("someone else\n");
      expect(readFileSync(path.join(t.root, "a.txt"), "utf8")).toBe("a2\n");
    });

    it("nothing to restore is exit 0 and commits nothing; --at is required (exit 2); --help has examples", async () => {
      await threeVersionsPulled(t);
      const same = await uspark(["restore", "a.txt", "--at", "2"]);
      expect(same.code, same.stderr).toBe(0);
      expect(await remoteVersion(t.server!.url, "p", TOKEN)).toBe(3);
      expect((await uspark(["restore", "a.txt"])).code).toBe(2);
      const help = await runCli(["restore", "--help"]);
      expect(help.stdout.toString()).toContain("$ uspark restore src/app.ts --at 12");
    });
  });

  describe("a server older than API 1.2", () => {
    it("keeps no history: log and --at are exit 2 saying so; ls of now still answers", async () => {
      // GET /files without "api": "1.2" (what a v1 server answers), and no commit feed.
      const v1 = await startProxy(t.server!.url, (req) =>
        req.method === "GET" && /\/files$/.test(req.url)
          ? { kind: "answer", status: 200, body: { version: 3, files: [{ path: "a.txt", sha256: "a".repeat(64), size: 1 }] } }
          : /\/commits\?/.test(req.url)
            ? { kind: "answer", status: 404, body: { error: "not_found", message: "no such route" } }
            : undefined,
      );
      try {
        const old = (...args: string[]) => runCli([...args, "--api-url", v1.url], { cwd: t.root, env: env(), timeoutMs: 30_000 });
        const log = await old("log");
        expect(log.code).toBe(2);
        expect(log.stderr).toContain("older than 1.2: it keeps no commit log");
        expect((await old("ls", "--at", "1")).code).toBe(2);
        const now = await old("ls");
        expect(now.code, now.stderr).toBe(0);
        expect(now.stdout.toString()).toBe("a.txt\n");
      } finally {
        await v1.close();
      }
    });
  });
});
