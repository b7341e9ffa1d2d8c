import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { remoteFiles } from "../kit/sync.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A path's commit feed (`GET /commits?path=`) lists only the commits that touched it, so its
 * versions skip. The client called that a protocol error: a push in a git checkout failed when it
 * asked whether the remote ever had a clean tracked file first committed after version 1.
 */

const TOKEN = "tok-path-feed";
const t = perTest("uspark-cli-path-feed-", { server: true });
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: t.root, stdio: "pipe" });

describe("a path's commit feed", () => {
  it("push in a git checkout: a clean file the remote had once (from version 2) and deleted is not a protocol error", async () => {
    await commitFiles(t.server!.url, "p", TOKEN, { "a.txt": "a\n" });
    await commitFiles(t.server!.url, "p", TOKEN, { "x.txt": "x\n" });
    await commitFiles(t.server!.url, "p", TOKEN, { "x.txt": null });
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    writeFileSync(path.join(t.root, "x.txt"), "x\n");
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "init");
    const push = await runCli(["push", "--project-id", "p", "--api-url", t.server!.url, "--token", TOKEN], {
      cwd: t.root,
      timeoutMs: 30_000,
    });
    expect(push.stderr).not.toContain("protocol");
    expect(push.code, push.stderr).toBe(0);
    // The remote's delete wins over a file git can give back: the push does not commit it again.
    expect([...(await remoteFiles(t.server!.url, "p", TOKEN)).keys()]).toEqual(["a.txt"]);
  });
});
