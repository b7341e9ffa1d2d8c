import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { remoteFiles, startMemoryRef, startProxy, type Proxy, type RefServer } from "../kit/sync.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A token goes only to a server this user chose on this machine (README, "Which server gets your
 * token"), through the built CLI: a state file another user dropped in a parent directory names a
 * server of theirs, and the victim's USPARK_TOKEN must never reach it.
 */

const t = perTest("uspark-cli-chosen-");
const TOKEN = "victims-secret-token";
let closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

async function server(project: string, token?: string): Promise<RefServer> {
  const started = await startMemoryRef(token, { projects: [project] });
  closers.push(() => started.stop());
  return started;
}

/** The other user's server: a real one behind a proxy that notes every request's headers. */
async function foreignServer(): Promise<Proxy> {
  const upstream = await server("bait");
  const proxy = await startProxy(upstream.url);
  closers.push(() => proxy.close());
  await commitFiles(upstream.url, "bait", "", { "readme.txt": "hello\n" });
  return proxy;
}

function dir(...parts: string[]): string {
  const made = path.join(t.root, ...parts);
  mkdirSync(made, { recursive: true });
  return made;
}

/** The CLI as `user` runs it: a home of their own and none of the caller's settings. */
function asUser(user: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCli(args, {
    cwd,
    env: { HOME: dir("homes", user), USPARK_API_URL: undefined, USPARK_PROJECT_ID: undefined, USPARK_TOKEN: undefined, ...extra },
  });
}

describe("a token goes only to a server this user chose", () => {
  it("a foreign state file in a parent directory: the command stops naming the server and --api-url, and the server gets no Authorization", async () => {
    const foreign = await foreignServer();
    const shared = dir("shared");
    const planted = await asUser("mallory", ["pull", "--project-id", "bait", "--api-url", foreign.url], shared);
    expect(planted.code, planted.stderr).toBe(0);
    foreign.seen.length = 0;

    const work = dir("shared", "victim");
    writeFileSync(path.join(work, "notes.txt"), "private\n");
    for (const command of [["status"], ["push"], ["pull"], ["projects"], ["log"]]) {
      const run = await asUser("victim", command, work, { USPARK_TOKEN: TOKEN });
      expect(
        foreign.seen.filter((req) => req.headers.authorization !== undefined).map((req) => `${command[0]}: ${req.method} ${req.url}`),
      ).toEqual([]);
      expect(run.code, `${command[0]}: ${run.stderr}`).toBe(2);
      const lines = run.stderr.trim().split("\n");
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0]).toContain(foreign.url);
      expect(lines[0]).toContain(`--api-url ${foreign.url}`);
    }
    expect(foreign.seen).toEqual([]);
  });

  it("--api-url confirms the tree's server and records it: the next command there needs no flag", async () => {
    const foreign = await foreignServer();
    const tree = dir("tree");
    expect((await asUser("mallory", ["pull", "--project-id", "bait", "--api-url", foreign.url], tree)).code).toBe(0);

    const confirmed = await asUser("victim", ["status", "--api-url", foreign.url], tree, { USPARK_TOKEN: TOKEN });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    const known = path.join(t.root, "homes", "victim", ".uspark", "known-servers");
    expect(statSync(known).mode & 0o777).toBe(0o600);
    const again = await asUser("victim", ["status"], tree, { USPARK_TOKEN: TOKEN });
    expect(again.code, again.stderr).toBe(0);
    expect(foreign.seen.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("the daily loop in CI: pull with flags in a fresh HOME, then push with none", async () => {
    const ref = await server("app", TOKEN);
    await commitFiles(ref.url, "app", TOKEN, { "a.txt": "a\n" });
    const tree = dir("ci", "checkout");
    const ci = { USPARK_TOKEN: TOKEN };
    const pull = await asUser("ci", ["pull", "--project-id", "app", "--api-url", ref.url], tree, ci);
    expect(pull.code, pull.stderr).toBe(0);
    writeFileSync(path.join(tree, "b.txt"), "b\n");
    const push = await asUser("ci", ["push"], tree, ci);
    expect(push.code, push.stderr).toBe(0);
    expect((await remoteFiles(ref.url, "app", TOKEN)).get("b.txt")?.toString()).toBe("b\n");
  });
});
