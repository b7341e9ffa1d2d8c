import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { perTest } from "../kit/fixtures.js";

/** `uspark diff [path…] [--remote]` through the built CLI against the reference server. */

const TOKEN = "tok-diff";
const t = perTest("uspark-cli-diff-", { server: true });
const env = () => ({ USPARK_API_URL: t.server!.url, USPARK_TOKEN: TOKEN, USPARK_PROJECT_ID: "p" });
const uspark = (...args: string[]) => runCli(args, { cwd: t.root, env: env(), timeoutMs: 30_000 });
const commit = (files: Record<string, string | Buffer | null>) => commitFiles(t.server!.url, "p", TOKEN, files);

async function pulled(files: Record<string, string | Buffer>): Promise<void> {
  await commit(files);
  expect((await uspark("pull")).code).toBe(0);
}

describe("uspark diff", () => {
  it("shows local changes against the last sync: an edit, a new file, a delete, a binary file in one line", async () => {
    await pulled({ "a.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "img.bin": Buffer.from([0, 1, 2]) });
    writeFileSync(path.join(t.root, "a.txt"), "one\nTWO\nthree\n");
    writeFileSync(path.join(t.root, "new.txt"), "hello\n");
    writeFileSync(path.join(t.root, "img.bin"), Buffer.from([0, 9]));
    rmSync(path.join(t.root, "gone.txt"));
    const diff = await uspark("diff");
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout.toString()).toBe(
      [
        "diff --uspark a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        "diff --uspark a/gone.txt b/gone.txt\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
        "diff --uspark a/img.bin b/img.bin\nBinary files a/img.bin and b/img.bin differ\n",
        "diff --uspark a/new.txt b/new.txt\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n",
      ].join(""),
    );
    const one = await uspark("diff", "new.txt");
    expect(one.stdout.toString()).toBe("diff --uspark a/new.txt b/new.txt\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n");
  });

  it("--remote shows what a pull would change here; without it, remote changes are not shown", async () => {
    await pulled({ "a.txt": "one\n" });
    await commit({ "a.txt": "one\nmore\n", "b.txt": "b\n" });
    expect((await uspark("diff")).stdout.toString()).toBe("");
    const remote = await uspark("diff", "--remote");
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout.toString()).toBe(
      "diff --uspark a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+more\n" +
        "diff --uspark a/b.txt b/b.txt\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n",
    );
    const help = await runCli(["diff", "--help"]);
    expect(help.stdout.toString()).toContain("$ uspark diff --remote");
  });
});
