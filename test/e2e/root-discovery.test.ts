import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { remoteFiles } from "../kit/sync.js";
import { perTest } from "../kit/fixtures.js";

/**
 * Root discovery and the remembered remote (docs/commands.md#finding-the-root), through the built CLI: in a pulled tree
 * push and pull need no flags, from any subdirectory, as git does.
 */

const t = perTest("uspark-cli-root-", { server: true });

/** A home of the test's own, and none of the caller's settings: only the tree may remember a remote. */
function env(): NodeJS.ProcessEnv {
  return { HOME: path.join(t.root, "home"), USPARK_API_URL: undefined, USPARK_PROJECT_ID: undefined, USPARK_TOKEN: undefined };
}

function uspark(args: string[], cwd: string): Promise<CliResult> {
  return runCli(args, { cwd, env: env() });
}

function dir(...parts: string[]): string {
  const made = path.join(t.root, ...parts);
  mkdirSync(made, { recursive: true });
  return made;
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/**
 * Another writer's commit of `files` to `project`, straight through the API: the remote these
 * tests start from (the CLI under test is not what puts it there).
 */
function seed(project: string, files: Record<string, string>): Promise<number> {
  return commitFiles(t.server!.url, project, "", files);
}

/** `project` seeded with `files`, then pulled into a fresh `name` with full flags. */
async function pulledTree(name: string, project: string, files: Record<string, string>): Promise<string> {
  await seed(project, files);
  const tree = dir(name);
  const pulled = await uspark(["pull", "--project-id", project, "--api-url", t.server!.url], tree);
  expect(pulled.code, pulled.stderr).toBe(0);
  return tree;
}

/** What the server holds: { path: text }, read over the API (the CLI under test is not the judge). */
async function remote(project: string): Promise<Map<string, string>> {
  const files = await remoteFiles(t.server!.url, project);
  return new Map([...files].map(([file, bytes]) => [file, bytes.toString("utf8")]));
}

/** Whether the project holds `dir` or anything under it. */
async function remoteHas(project: string, dir: string): Promise<boolean> {
  return [...(await remote(project)).keys()].some((file) => file === dir || file.startsWith(`${dir}/`));
}

describe("root discovery and the remembered remote", () => {
  it("push in a pulled directory needs no --project-id nor --api-url", async () => {
    const tree = await pulledTree("tree", "p", { "a.txt": "a\n" });
    write(path.join(tree, "b.txt"), "b\n");
    const push = await uspark(["push"], tree);
    expect(push.code, push.stderr).toBe(0);
    expect((await remote("p")).get("b.txt")).toBe("b\n");
  });

  it("watch (the pipe form) and projects in a pulled subdirectory need no flags either", async () => {
    const tree = await pulledTree("tree", "p", { "src/a.txt": "a\n" });
    const src = path.join(tree, "src");
    write(path.join(src, "w.txt"), "w\n");
    const watch = await runCli(["watch"], { cwd: src, env: env(), input: "" });
    expect(watch.code, watch.stderr).toBe(0);
    expect((await remote("p")).get("src/w.txt")).toBe("w\n");
    const projects = await uspark(["projects"], src);
    expect(projects.code, projects.stderr).toBe(0);
    expect(projects.stdout.toString()).toMatch(/^p\b/m);
  });

  it("push and pull from a subdirectory work on the root: remote paths from the root, no src/src/", async () => {
    const tree = await pulledTree("tree", "p", { "src/a.txt": "a1\n" });
    const src = path.join(tree, "src");
    write(path.join(src, "b.txt"), "b\n");
    const push = await uspark(["push", "b.txt"], src);
    expect(push.code, push.stderr).toBe(0);
    const pushed = await remote("p");
    expect(pushed.get("src/b.txt")).toBe("b\n");
    expect(pushed.has("b.txt")).toBe(false);

    await seed("p", { "src/a.txt": "a2\n" });
    const pull = await uspark(["pull", "a.txt"], src); // relative to the current directory: src/a.txt
    expect(pull.code, pull.stderr).toBe(0);
    expect(readFileSync(path.join(src, "a.txt"), "utf8")).toBe("a2\n");
    const pullAll = await uspark(["pull"], src);
    expect(pullAll.code, pullAll.stderr).toBe(0);
    expect(existsSync(path.join(src, "src"))).toBe(false);
    expect(existsSync(path.join(src, ".uspark"))).toBe(false);
  });

  it("--root wins over the tree the command stands in, and brings that root's remembered remote", async () => {
    const here = await pulledTree("here", "p", { "a.txt": "here\n" });
    const there = await pulledTree("there", "p1", { "a.txt": "there\n" });
    write(path.join(there, "t.txt"), "t\n");
    const push = await uspark(["push", "--root", there], here);
    expect(push.code, push.stderr).toBe(0);
    expect((await remote("p1")).get("t.txt")).toBe("t\n");
    expect(await remoteHas("p", "t.txt")).toBe(false);
  });

  it("$HOME is never the root, even with a state file in ~/.uspark/; the nearest pulled tree below it is", async () => {
    const home = dir("home");
    write(path.join(home, ".uspark", "config.json"), JSON.stringify({ apiUrl: t.server!.url }));
    await pulledTree("home", "p1", { "h.txt": "h\n" }); // ~/.uspark/state.json now remembers p1
    expect(existsSync(path.join(home, ".uspark", "state.json"))).toBe(true);

    await seed("p", { "p.txt": "p\n" });
    const fresh = dir("home", "work", "fresh");
    const pull = await uspark(["pull", "--project-id", "p"], fresh); // the api url from ~/.uspark/config.json
    expect(pull.code, pull.stderr).toBe(0);
    expect(readFileSync(path.join(fresh, "p.txt"), "utf8")).toBe("p\n");
    expect(existsSync(path.join(home, "p.txt"))).toBe(false);

    const sub = dir("home", "work", "fresh", "sub");
    write(path.join(sub, "s.txt"), "s\n");
    const push = await uspark(["push"], sub);
    expect(push.code, push.stderr).toBe(0);
    expect((await remote("p")).get("sub/s.txt")).toBe("s\n");
    expect(await remoteHas("p1", "sub")).toBe(false);
    expect(await remoteHas("p1", "work")).toBe(false);
  });
});
