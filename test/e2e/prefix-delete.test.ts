import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { remoteFiles } from "../kit/sync.js";

const t = perTest("uspark-cli-prefix-", { server: true });

const connection = () => ["--project-id", "p1", "--api-url", t.server!.url, "--root", t.root];

describe("a --prefix that matches nothing (defect 17)", () => {
  it("should be a usage error with a hint for watch, push and run", async () => {
    mkdirSync(path.join(t.root, "docs"));
    const commands = [
      ["watch", ...connection(), "--prefix", "dcos"],
      ["push", ...connection(), "--prefix", "dcos", "--delete"],
      ["run", ...connection(), "--prefix", "dcos", "--", process.execPath, "-e", "0"],
    ];
    for (const args of commands) {
      const result = await runCli(args);
      expect(result.code, args[0]).toBe(2);
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines, args[0]).toEqual([
        expect.stringMatching(/^uspark: error: --prefix dcos is not a directory under the root .*\(check its spelling/),
      ]);
    }
    expect(t.server!.requests.filter((r) => r.method === "POST")).toEqual([]);
  });
});

describe("push --delete of most of the remote project (defect 17)", () => {
  /** 12 files on the remote, then all but one removed locally: 11 deletes of 12 files. */
  async function remoteWithTwelveFilesAndOneLeft(): Promise<void> {
    for (let i = 0; i < 12; i++) writeFileSync(path.join(t.root, `f${i}.txt`), `file ${i}\n`);
    expect((await runCli(["push", ...connection()])).code).toBe(0);
    for (let i = 1; i < 12; i++) rmSync(path.join(t.root, `f${i}.txt`));
  }

  it("should refuse without --force, all or nothing: said once, nothing deleted and nothing else committed, exit 1", async () => {
    // 24 synced files, 23 gone and one new: a net loss of 22 (a rename is no loss, so the guard counts net).
    for (let i = 0; i < 24; i++) writeFileSync(path.join(t.root, `f${i}.txt`), `file ${i}\n`);
    expect((await runCli(["push", ...connection()])).code).toBe(0);
    for (let i = 1; i < 24; i++) rmSync(path.join(t.root, `f${i}.txt`));
    writeFileSync(path.join(t.root, "new.txt"), "a new file in the same push\n");
    const commits = () => t.server!.requests.filter((r) => r.method === "POST" && r.url.endsWith("/commits")).length;
    const before = commits();
    const result = await runCli(["push", ...connection(), "--delete"]);
    expect(result.code).toBe(1);
    expect(result.stderr.match(/error: 23 of the 24 files last synced are missing here: not deleting them/g)).toHaveLength(1);
    expect(result.stderr).toContain("nothing was committed: a push is all or nothing when the mass-delete guard refuses");
    expect(result.stderr).toContain("uspark push --force");
    expect(commits()).toBe(before);
    expect([...(await remoteFiles(t.server!.url)).keys()]).not.toContain("new.txt");
    expect((await remoteFiles(t.server!.url)).size).toBe(24);
  });

  it("should state it in a dry run and send nothing (exit 1: the push would be refused)", async () => {
    await remoteWithTwelveFilesAndOneLeft();
    const writes = () => t.server!.requests.filter((r) => r.method === "POST" || r.method === "PUT").length;
    const before = writes();
    const result = await runCli(["push", ...connection(), "--delete", "--dry-run"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/warning: 11 deletes would be refused by the mass-delete guard \(--force carries them out\)/);
    expect(writes()).toBe(before);
    expect((await remoteFiles(t.server!.url)).size).toBe(12);
  });

  it("should delete with --force", async () => {
    await remoteWithTwelveFilesAndOneLeft();
    const result = await runCli(["push", ...connection(), "--delete", "--force"]);
    expect(result.code).toBe(0);
    expect([...(await remoteFiles(t.server!.url)).keys()]).toEqual(["f0.txt"]);
  });

  it("should delete a few files without --force", async () => {
    for (let i = 0; i < 12; i++) writeFileSync(path.join(t.root, `f${i}.txt`), `file ${i}\n`);
    expect((await runCli(["push", ...connection()])).code).toBe(0);
    for (let i = 0; i < 3; i++) rmSync(path.join(t.root, `f${i}.txt`));
    const result = await runCli(["push", ...connection(), "--delete"]);
    expect(result.code).toBe(0);
    expect((await remoteFiles(t.server!.url)).size).toBe(9);
  });
});
