import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { remoteVersion } from "../kit/sync.js";
import { writeIn, writersOnOneServer } from "../kit/fixtures.js";

/**
 * Conflicts (docs/sync.md, Conflicts), two writers on one project through the built CLI: a pull
 * never commits, `uspark resolve <path> --mine | --theirs | --both` ends a conflict and removes its
 * copy from the remote, so that every other tree loses it through its normal pull.
 */

const TOKEN = "tok-resolve";
const writers = writersOnOneServer(TOKEN, "uspark-resolve-");
const machine = writers.machine;

const env = writers.env;
const uspark = (cwd: string, ...args: string[]) => runCli(args, { cwd, env: env(), timeoutMs: 30_000 });
const remote = writers.remote;
const copies = (files: Iterable<string>) => [...files].filter((p) => p.includes(".conflict-"));
const write = writeIn;
const read = (dir: string, rel: string) => readFileSync(path.join(dir, rel), "utf8");

/** B synced x.txt ("v1"), then edited it here while someone else committed "theirs". */
async function staleEdit(): Promise<string> {
  const b = await machine("b");
  await commitFiles(writers.server.url, "p", TOKEN, { "x.txt": "v1" });
  expect((await uspark(b, "pull")).code).toBe(0);
  write(b, "x.txt", "mine");
  await commitFiles(writers.server.url, "p", TOKEN, { "x.txt": "theirs" });
  return b;
}

/** As staleEdit, and B's push committed its version as a conflict copy; C pulled the copy too. */
async function pushedConflict(): Promise<{ b: string; c: string; copy: string }> {
  const b = await staleEdit();
  expect((await uspark(b, "push")).code).toBe(1);
  const [copy] = copies((await remote()).keys());
  const c = await machine("c");
  expect((await uspark(c, "pull")).code).toBe(0);
  expect(read(c, copy!)).toBe("mine");
  return { b, c, copy: copy! };
}

describe("a pull never commits", () => {
  it("a conflict met by pull keeps the local file, leaves the remote alone, says how to resolve, is open in status (exit 1)", async () => {
    const b = await staleEdit();
    const versionBefore = await remoteVersion(writers.server.url, "p", TOKEN);
    const dry = await uspark(b, "pull", "--dry-run");
    expect(dry.stderr).toContain("conflict x.txt: would keep both as they are (a pull never commits)");
    const pulled = await uspark(b, "pull");
    expect(pulled.code).toBe(1);
    expect(copies((await remote()).keys())).toEqual([]);
    expect(await remoteVersion(writers.server.url, "p", TOKEN)).toBe(versionBefore);
    expect(read(b, "x.txt")).toBe("mine");
    expect(pulled.stderr).toContain("conflict x.txt");
    expect(pulled.stderr).toContain("uspark resolve x.txt --mine");
    const status = await uspark(b, "status");
    expect(status.code).toBe(1);
    expect(status.stdout.toString()).toMatch(/both changed: +x\.txt/);
    expect(status.stdout.toString()).toContain("uspark resolve <path> --mine");
    // A command that writes commits the copy, as before.
    expect((await uspark(b, "push")).code).toBe(1);
    expect(copies((await remote()).keys())).toHaveLength(1);
  });
});

/** What a resolution leaves remotely: `x.txt` as chosen, no conflict copy; and the tree in sync. */
async function expectResolvedRemotely(tree: string, text: string): Promise<void> {
  const files = await remote();
  expect(files.get("x.txt")).toBe(text);
  expect(copies(files.keys())).toEqual([]);
  expect((await uspark(tree, "status")).code).toBe(0);
}

describe("uspark resolve", () => {
  it("--mine after a pull's conflict: yours over theirs, no copy anywhere, in sync", async () => {
    const b = await staleEdit();
    expect((await uspark(b, "pull")).code).toBe(1);
    const resolved = await uspark(b, "resolve", "x.txt", "--mine");
    expect(resolved.code, resolved.stderr).toBe(0);
    await expectResolvedRemotely(b, "mine");
  });

  it("--mine: yours committed over theirs, the copy deleted remotely; another tree's pull drops its copy", async () => {
    const { b, c, copy } = await pushedConflict();
    const resolved = await uspark(b, "resolve", "x.txt", "--mine");
    expect(resolved.code, resolved.stderr).toBe(0);
    await expectResolvedRemotely(b, "mine");
    expect((await uspark(c, "pull")).code).toBe(0);
    expect(existsSync(path.join(c, copy))).toBe(false);
    expect(read(c, "x.txt")).toBe("mine");
  });

  it("--theirs: the remote's version here (yours in .uspark/backup/), the copy deleted remotely and in another tree", async () => {
    const { b, c, copy } = await pushedConflict();
    const resolved = await uspark(b, "resolve", "x.txt", "--theirs");
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(read(b, "x.txt")).toBe("theirs");
    const [label] = readdirSync(path.join(b, ".uspark", "backup"));
    expect(read(b, path.join(".uspark", "backup", label!, "x.txt"))).toBe("mine");
    await expectResolvedRemotely(b, "theirs");
    expect((await uspark(c, "pull")).code).toBe(0);
    expect(existsSync(path.join(c, copy))).toBe(false);
  });

  it("--both: theirs at the path, yours kept as a file of its own here and remotely", async () => {
    const { b, copy } = await pushedConflict();
    const resolved = await uspark(b, "resolve", "x.txt", "--both");
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(read(b, "x.txt")).toBe("theirs");
    expect(read(b, copy)).toBe("mine");
    const files = await remote();
    expect(files.get("x.txt")).toBe("theirs");
    expect(files.get(copy)).toBe("mine");
    expect((await uspark(b, "status")).code).toBe(0);
  });

  it("--mine keeps a copy someone edited since, and says so", async () => {
    const { b, copy } = await pushedConflict();
    await commitFiles(writers.server.url, "p", TOKEN, { [copy]: "mine, edited by C" });
    const resolved = await uspark(b, "resolve", "x.txt", "--mine");
    expect(resolved.stderr).toContain(`${copy} was changed since`);
    const files = await remote();
    expect(files.get("x.txt")).toBe("mine");
    expect(files.get(copy)).toBe("mine, edited by C");
  });

  it("a path with no open conflict, or no choice, is bad usage (exit 2)", async () => {
    const b = await staleEdit();
    expect((await uspark(b, "resolve", "x.txt")).code).toBe(2);
    const none = await uspark(b, "resolve", "nothing.txt", "--mine");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no open conflict");
  });
});
