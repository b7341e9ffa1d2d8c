import { mkdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { perTest } from "../kit/fixtures.js";

/** `uspark status` through the built CLI against the reference server: exit codes, text, --short and --json. */

const t = perTest("uspark-cli-status-", { server: true });
const env = () => ({ USPARK_API_URL: t.server!.url, USPARK_TOKEN: "tok-status", USPARK_PROJECT_ID: "p" });
const uspark = (...args: string[]) => runCli(args, { cwd: t.root, env: env(), timeoutMs: 30_000 });
const write = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(t.root, rel)), { recursive: true });
  writeFileSync(path.join(t.root, rel), text);
};

interface StatusJson {
  format: number;
  inSync: boolean;
  baseVersion: number;
  remoteVersion: number;
  paths: { path: string; status: string; copy?: string }[];
}

async function pulled(files: Record<string, string>): Promise<void> {
  await commitFiles(t.server!.url, "p", "tok-status", files);
  const pull = await uspark("pull");
  expect(pull.code, pull.stderr).toBe(0);
  t.server!.requests.length = 0;
}

describe("uspark status", () => {
  it("in sync: exit 0, says so in text and JSON; nothing is sent", async () => {
    await pulled({ "a.txt": "a\n", "src/b.ts": "b\n" });
    const text = await uspark("status");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.toString()).toContain("in sync: nothing to push or pull");
    const json = await uspark("status", "--json");
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout.toString()) as StatusJson;
    expect(parsed).toMatchObject({ format: 1, inSync: true, baseVersion: 1, remoteVersion: 1, paths: [] });
    expect(t.server!.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("changes on both sides: exit 1; each path once with its state, in text, --short and --json", async () => {
    await pulled({ "a.txt": "a\n", "gone.txt": "g\n", "theirs.txt": "t\n", "dropped.txt": "d\n" });
    write("a.txt", "a edited here\n");
    write("new-here.txt", "n\n");
    rmSync(path.join(t.root, "gone.txt"));
    await commitFiles(t.server!.url, "p", "tok-status", { "theirs.txt": "t2\n", "new-there.txt": "x\n", "dropped.txt": null });
    t.server!.requests.length = 0;
    const state = () => readFileSync(path.join(t.root, ".uspark", "state.json"), "utf8");
    // Same content, a new stat: a round refreshes the base's stat, and a dry run must not write it.
    utimesSync(path.join(t.root, "theirs.txt"), new Date(), new Date(Date.now() - 30_000));
    const stateBefore = state();
    const json = await uspark("status", "--json");
    expect(json.code, json.stderr).toBe(1);
    const parsed = JSON.parse(json.stdout.toString()) as StatusJson;
    expect(parsed.inSync).toBe(false);
    expect(parsed.remoteVersion).toBe(2);
    expect(parsed.baseVersion).toBe(1);
    expect(parsed.paths).toEqual([
      { path: "a.txt", status: "modified-here" },
      { path: "dropped.txt", status: "deleted-remotely" },
      { path: "gone.txt", status: "deleted-here" },
      { path: "new-here.txt", status: "added-here" },
      { path: "new-there.txt", status: "added-remotely" },
      { path: "theirs.txt", status: "modified-remotely" },
    ]);
    const short = await uspark("status", "--short");
    expect(short.code).toBe(1);
    expect(short.stdout.toString()).toBe("M  a.txt\n D dropped.txt\nD  gone.txt\nA  new-here.txt\n A new-there.txt\n M theirs.txt\n");
    const text = await uspark("status");
    expect(text.code).toBe(1);
    expect(text.stdout.toString()).toMatch(
      /Changes here \(uspark push sends them\):\n {2}modified: +a\.txt\n {2}deleted: +gone\.txt\n {2}new: +new-here\.txt\n/,
    );
    expect(text.stdout.toString()).toContain("6 not in sync");
    // status changed nothing: the same answer again, and nothing was committed
    expect(JSON.parse((await uspark("status", "--json")).stdout.toString())).toEqual(parsed);
    expect(t.server!.requests.filter((r) => r.method === "POST")).toEqual([]);
    // Like git status refreshing the index, a stat the base could not trust may be filled in; what it says was synced stays.
    expect(state()).toBe(stateBefore);
  });

  it("a file changed on both sides is a conflict (UU), before and after the push that opens it", async () => {
    await pulled({ "a.txt": "a\n" });
    write("a.txt", "mine\n");
    await commitFiles(t.server!.url, "p", "tok-status", { "a.txt": "theirs\n" });
    const before = await uspark("status", "--short");
    expect(before.code).toBe(1);
    expect(before.stdout.toString()).toBe("UU a.txt\n");
    expect((await uspark("push")).code).toBe(1);
    const after = JSON.parse((await uspark("status", "--json")).stdout.toString()) as StatusJson;
    expect(after.paths).toEqual([
      { path: "a.txt", status: "conflict", copy: expect.stringMatching(/^a\.conflict-\d{8}-\d{6}-.+-[0-9a-f]{6}\.txt$/) },
    ]);
  });

  it("a path journaled by an earlier run is pending (exit 1) until push --pending syncs it", async () => {
    await pulled({ "a.txt": "a\n" });
    const entry = {
      apiUrl: t.server!.url,
      projectId: "p",
      path: "a.txt",
      local: path.join(realpathSync(t.root), "a.txt"),
      reason: "the server did not answer",
      time: new Date().toISOString(),
    };
    writeFileSync(path.join(t.root, ".uspark", "pending.json"), JSON.stringify({ version: 1, entries: [entry] }));
    const pending = await uspark("status", "--short");
    expect(pending.code, pending.stderr).toBe(1);
    expect(pending.stdout.toString()).toBe("P  a.txt\n");
    expect((await uspark("push", "--pending")).code).toBe(0);
    expect((await uspark("status", "--short")).code).toBe(0);
  });

  it("a project that does not exist is exit 2; --help has examples", async () => {
    const unknown = await runCli(["status", "--project-id", "nope"], { cwd: t.root, env: { ...env(), USPARK_PROJECT_ID: undefined } });
    expect(unknown.code, unknown.stderr).toBe(2);
    const help = await runCli(["status", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toContain("$ uspark status --short");
  });
});
