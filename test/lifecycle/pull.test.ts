// `uspark pull` end to end: the built CLI as a child process against the reference server (v1.1,
// and v1 behind a proxy that answers 404 on the v1.1 routes) or a hostile server on 127.0.0.1.

import { lstat, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { cliEnv, newToken, workspace } from "../reliability/harness.js";
import { isBlobDownload, remoteFiles, startMemoryRef, startProxy, v1Only, type RefServer } from "../kit/sync.js";
import { commitFiles, pullInWorker, startHostileServer } from "../kit/remote.js";

const PROJECT = "pull-test";
let ws: Awaited<ReturnType<typeof workspace>>;
let server: RefServer;
let token: string;

beforeEach(async () => {
  ws = await workspace("uspark-pull-");
  token = newToken();
  server = await startMemoryRef(token, { projects: [PROJECT] });
});

afterEach(async () => {
  await server.stop();
  await ws.cleanup();
});

function pull(apiUrl: string, ...args: string[]) {
  return runCli(["pull", "--project-id", PROJECT, "--api-url", apiUrl, "--root", ws.root, "--log-format", "json", "--verbose", ...args], {
    cwd: ws.root,
    env: cliEnv(ws.home, token),
    timeoutMs: 60_000,
  });
}

const events = (stderr: string, event: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { event: string; path?: string; message: string })
    .filter((r) => r.event === event);

const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31 + (i >> 8)) & 0xff));
const FILES: Record<string, Buffer> = {
  "README.md": Buffer.from("# hello\n"),
  "src/deep/nested/dir/a.ts": Buffer.from("export const a = 1;\r\n"),
  "docs/日本語/ünïcödé 名前.txt": Buffer.from("unicode ✓\n"),
  "assets/blob.bin": binary,
  "empty.txt": Buffer.alloc(0),
  "same-content-1.txt": Buffer.from("twin"),
  "same-content-2.txt": Buffer.from("twin"),
};

async function expectTree(files: Record<string, Buffer>) {
  for (const [rel, bytes] of Object.entries(files)) expect((await readFile(path.join(ws.root, rel))).equals(bytes), rel).toBe(true);
}

describe.each(["v1.1", "v1"] as const)("uspark pull (API %s)", (api) => {
  async function apiUrl(): Promise<{ url: string; close: () => Promise<void> }> {
    if (api === "v1.1") return { url: server.url, close: async () => {} };
    const proxy = await startProxy(server.url, v1Only);
    return { url: proxy.url, close: () => proxy.close() };
  }

  it("writes nested, unicode, binary and empty files byte-exact; a second pull downloads nothing", async () => {
    await commitFiles(server.url, PROJECT, token, FILES);
    const target = await apiUrl();
    try {
      const first = await pull(target.url);
      expect(first.code, first.stderr).toBe(0);
      await expectTree(FILES);
      expect(events(first.stderr, "summary")[0]!.message).toBe("pulled 7 files, 0 unchanged");
      expect(events(first.stderr, "api-v1")).toHaveLength(api === "v1" ? 1 : 0);
      const downloads = server.requests.filter(isBlobDownload).length;
      // Six distinct blobs: one pack on v1.1, one GET each on v1.
      expect(downloads).toBe(api === "v1.1" ? 1 : 6);

      const second = await pull(target.url);
      expect(second.code, second.stderr).toBe(0);
      expect(events(second.stderr, "summary")[0]!.message).toBe("pulled 0 files, 7 unchanged");
      expect(server.requests.filter(isBlobDownload).length).toBe(downloads);
    } finally {
      await target.close();
    }
  });
});

describe("uspark pull: local changes", () => {
  it("a file changed on both sides is a conflict: kept here, nothing committed (a pull never writes to the remote), said once; --force <path> takes theirs with a backup", async () => {
    await commitFiles(server.url, PROJECT, token, { "a.txt": "v1\n", "b.txt": "b1\n" });
    await pullInWorker(ws.root, server.url, PROJECT, token);
    await writeFile(path.join(ws.root, "a.txt"), "my local edit\n");
    await commitFiles(server.url, PROJECT, token, { "a.txt": "v2\n", "b.txt": "b2\n" });

    const kept = await pull(server.url);
    expect(kept.code).toBe(1);
    expect(await readFile(path.join(ws.root, "a.txt"), "utf8")).toBe("my local edit\n");
    expect(await readFile(path.join(ws.root, "b.txt"), "utf8")).toBe("b2\n");
    const conflict = events(kept.stderr, "conflict");
    expect(conflict.map((r) => r.path)).toEqual(["a.txt"]);
    expect(events(kept.stderr, "summary")[0]!.message).toBe("pulled 1 file, 0 unchanged, 1 conflict");
    expect(conflict[0]!.message).toContain("uspark resolve a.txt --mine | --theirs | --both");
    const copies = async () => [...(await remoteFiles(server.url, PROJECT, token)).keys()].filter((p) => p.startsWith("a.conflict-"));
    expect(await copies()).toEqual([]);

    // Still open the next time, not said again, still nothing committed.
    const again = await pull(server.url);
    expect(again.code).toBe(1);
    expect(events(again.stderr, "conflict")).toEqual([]);
    expect(await copies()).toEqual([]);

    const forced = await pull(server.url, "--force", "a.txt");
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readFile(path.join(ws.root, "a.txt"), "utf8")).toBe("v2\n");
    const backups = await readdir(path.join(ws.root, ".uspark", "backup"));
    expect(await readFile(path.join(ws.root, ".uspark", "backup", backups[0]!, "a.txt"), "utf8")).toBe("my local edit\n");
  });

  it("without a base, a local file that differs from the remote is a conflict: the local file stays", async () => {
    await commitFiles(server.url, PROJECT, token, { "a.txt": "remote\n" });
    await writeFile(path.join(ws.root, "a.txt"), "local\n");
    const result = await pull(server.url);
    expect(result.code).toBe(1);
    expect(await readFile(path.join(ws.root, "a.txt"), "utf8")).toBe("local\n");
    expect(events(result.stderr, "conflict").map((r) => r.path)).toEqual(["a.txt"]);
    // Not "changed here and remotely": nothing was ever synced here to have changed from.
    expect(events(result.stderr, "conflict")[0]!.message).toMatch(
      /^conflict a\.txt: differs from the remote and was never synced here \(nothing tells which is newer\); both kept as they are/,
    );
  });

  it("deletes what the remote deleted, but an edit here beats the remote's delete", async () => {
    await commitFiles(server.url, PROJECT, token, {
      "gone.txt": "g\n",
      "edited.txt": "e\n",
      "stays.txt": "s\n",
      "moved/away/a.txt": "a\n",
    });
    await pullInWorker(ws.root, server.url, PROJECT, token);
    await writeFile(path.join(ws.root, "edited.txt"), "changed here\n");
    await commitFiles(server.url, PROJECT, token, { "gone.txt": null, "edited.txt": null, "moved/away/a.txt": null });

    const result = await pull(server.url, "--delete");
    expect(result.code, result.stderr).toBe(0);
    // The directories the deletes emptied went with them.
    expect((await readdir(ws.root)).sort()).toEqual([".uspark", "edited.txt", "stays.txt"]);
    expect(await readFile(path.join(ws.root, "edited.txt"), "utf8")).toBe("changed here\n");
    expect(events(result.stderr, "summary")[0]!.message).toBe(
      "pulled 0 files, 1 unchanged, 2 deleted, 1 changed here (uspark push sends them)",
    );
  });

  it("refuses to empty the tree when the remote suddenly lacks most of it (exit 1), and does with --force", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `f${i}.txt`);
    await commitFiles(server.url, PROJECT, token, Object.fromEntries(names.map((n) => [n, `${n}\n`])));
    await pullInWorker(ws.root, server.url, PROJECT, token);
    await commitFiles(server.url, PROJECT, token, Object.fromEntries(names.slice(1).map((n) => [n, null])));

    const dry = await pull(server.url, "--dry-run");
    expect(dry.code).toBe(1);
    expect(events(dry.stderr, "mass-delete")).toHaveLength(1);
    const held = await pull(server.url);
    expect(held.code).toBe(1);
    expect(events(held.stderr, "summary")[0]!.message).toBe("pulled 0 files, 1 unchanged, 11 not deleted");
    expect((await readdir(ws.root)).length).toBe(13);
    // Held, not forgotten: the next plain pull still refuses.
    expect((await pull(server.url)).code).toBe(1);
    expect((await readdir(ws.root)).length).toBe(13);

    const forced = await pull(server.url, "--force");
    expect(forced.code, forced.stderr).toBe(0);
    expect((await readdir(ws.root)).sort()).toEqual([".uspark", "f0.txt"]);
  });

  it("--dry-run prints the plan and touches nothing", async () => {
    await commitFiles(server.url, PROJECT, token, { "a.txt": "a\n", "d/b.txt": "b\n" });
    const result = await pull(server.url, "--dry-run");
    expect(result.code, result.stderr).toBe(0);
    expect(
      events(result.stderr, "pull-plan")
        .map((r) => r.path)
        .sort(),
    ).toEqual(["a.txt", "d/b.txt"]);
    expect(await readdir(ws.root)).toEqual([]);
    expect(server.requests.filter(isBlobDownload)).toEqual([]);
  });

  it("--prefix and --ignore: only under the prefix, ignored files left out", async () => {
    await commitFiles(server.url, PROJECT, token, { "a.txt": "a\n", "debug.log": "log\n" });
    const result = await pull(server.url, "--prefix", "vendor/app", "--ignore", "*.log");
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(path.join(ws.root, "vendor/app/a.txt"), "utf8")).toBe("a\n");
    expect((await readdir(ws.root)).sort()).toEqual([".uspark", "vendor"]);
    expect(await readdir(path.join(ws.root, "vendor/app"))).toEqual(["a.txt"]);
  });

  it("writes nothing the local .gitignore files ignore, as watch and push never push it (anchored and nested lines too)", async () => {
    await writeFile(path.join(ws.root, ".gitignore"), "/secrets.env\ndist/\n");
    await mkdir(path.join(ws.root, "sub"));
    await writeFile(path.join(ws.root, "sub/.gitignore"), "*.tmp\n");
    await commitFiles(server.url, PROJECT, token, {
      "a.txt": "a\n",
      "secrets.env": "k=v\n",
      "dist/x.js": "x\n",
      "sub/y.tmp": "y\n",
      "sub/secrets.env": "not anchored here\n",
    });
    const result = await pull(server.url);
    expect(result.code, result.stderr).toBe(0);
    expect(events(result.stderr, "summary")[0]!.message).toBe(
      "pulled 2 files, 0 unchanged, 3 ignored, 2 changed here (uspark push sends them)",
    );
    expect((await readdir(ws.root)).sort()).toEqual([".gitignore", ".uspark", "a.txt", "sub"]);
    expect((await readdir(path.join(ws.root, "sub"))).sort()).toEqual([".gitignore", "secrets.env"]);
  });
});

describe("uspark pull: a hostile listing", () => {
  it("writes nothing outside the root, nothing in .git/ or .uspark/, nothing through a symlink; exit 1", async () => {
    const outside = path.join(ws.base, "outside");
    await mkdir(outside);
    await mkdir(path.join(ws.root, ".git"));
    await writeFile(path.join(ws.root, ".git/config"), "[core]\n");
    await symlink(outside, path.join(ws.root, "link"));
    const evil = Buffer.from("pwned\n");
    const hostilePaths = [
      "../x",
      "/abs",
      ".git/config",
      ".uspark/state.json",
      "link/x",
      "nul\0.txt",
      "back\\slash.txt",
      `${"l".repeat(1030)}.txt`,
      "dup.txt",
      "dup.txt",
      "clash",
      "clash/inner.txt",
    ];
    const hostile = await startHostileServer([
      ...hostilePaths.map((p) => ({ path: p, content: evil })),
      { path: "ok.txt", content: Buffer.from("fine\n") },
    ]);
    try {
      const result = await pull(hostile.url);
      expect(result.code).toBe(1);
      expect(await readFile(path.join(ws.root, "ok.txt"), "utf8")).toBe("fine\n");
      expect(await readdir(outside)).toEqual([]);
      expect(await readFile(path.join(ws.root, ".git/config"), "utf8")).toBe("[core]\n");
      expect(await readFile(path.join(ws.root, ".uspark/state.json"), "utf8")).not.toContain("pwned");
      await expect(lstat(path.join(ws.base, "x"))).rejects.toThrow();
      await expect(lstat("/abs")).rejects.toThrow();
      expect((await readdir(ws.root)).sort()).toEqual([".git", ".uspark", "link", "ok.txt"]);
      // One warning per refused path (the duplicate is one path).
      const refused = events(result.stderr, "pull-refused").map((r) => r.path);
      expect(new Set(refused).size).toBe(new Set(hostilePaths).size);
      expect(events(result.stderr, "summary")[0]!.message).toContain("refused");
    } finally {
      await hostile.close();
    }
  });
});

describe("uspark pull: a failing server", () => {
  it("retries failing downloads, says so once as a warning, and pulls everything", async () => {
    await commitFiles(server.url, PROJECT, token, FILES);
    let failures = 0;
    const proxy = await startProxy(server.url, (req) =>
      isBlobDownload(req) && failures++ < 3
        ? { kind: "answer", status: 503, headers: { "retry-after": "0" }, body: { error: "unavailable" } }
        : undefined,
    );
    try {
      const result = await pull(proxy.url);
      expect(result.code, result.stderr).toBe(0);
      await expectTree(FILES);
      const retries = events(result.stderr, "retry") as { level?: string; message: string }[];
      expect(retries).toHaveLength(3);
      expect(retries.filter((r) => r.level === "warn").map((r) => r.message)).toEqual([
        expect.stringMatching(/^waiting for 127\.0\.0\.1:\d+: 503 unavailable, retry 1 in 0 ms$/),
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("gives up when no request has gone through for --timeout, exit 1", async () => {
    await commitFiles(server.url, PROJECT, token, FILES);
    const proxy = await startProxy(server.url, (req) => (isBlobDownload(req) ? { kind: "stall" } : undefined));
    try {
      const result = await pull(proxy.url, "--timeout", "1000", "--request-timeout", "400");
      expect(result.code).toBe(1);
      expect(events(result.stderr, "pull-failed").map((r) => r.message)).toEqual(["pull failed: the server has not answered for 1000 ms"]);
    } finally {
      await proxy.close();
    }
  });
});
