import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { play, sessionLines } from "../../scripts/play-session.mjs";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { writeEvents } from "../kit/fixtures.js";
import { remoteFiles, remoteVersion, startMemoryRef, tempDir, type RefServer } from "../kit/sync.js";

const FIXTURE = path.join(import.meta.dirname, "..", "..", "fixtures", "claude", "session.jsonl");

let root: string;
let cleanup: () => Promise<void>;
let server: RefServer | undefined;

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-cli-sync-"));
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  await cleanup();
});

/** The recorded session with its edits applied to `root`, as the agent left them. */
async function playedSession(): Promise<string> {
  let text = "";
  for await (const line of play(sessionLines(FIXTURE, root), root)) text += line;
  return text;
}

function watchArgs(apiUrl: string, ...extra: string[]): string[] {
  return ["watch-claude", "--project-id", "p1", "--api-url", apiUrl, "--root", root, "--no-fs-watch", ...extra];
}

describe("watch-claude against the reference server", () => {
  it("should push every file the session wrote, byte for byte, and pass stdout through", async () => {
    server = await startMemoryRef();
    const input = await playedSession();
    const result = await runCli(watchArgs(server.url), { input });
    expect(result.stderr).toContain("synced: 5 files pushed");
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toBe(input);
    const remote = await remoteFiles(server.url);
    expect([...remote.keys()].sort()).toEqual(["README.md", "docs/notes.md", "notebooks/analysis.ipynb", "src/app.ts", "src/util.ts"]);
    for (const [file, bytes] of remote) expect(bytes.equals(readFileSync(path.join(root, file)))).toBe(true);
  });

  it("should make one commit of the last content for 20 quick edits of one file", async () => {
    server = await startMemoryRef();
    const file = path.join(root, "hot.txt");
    const { child, result } = await startCli(watchArgs(server.url));
    for (let i = 1; i <= 20; i++) {
      writeFileSync(file, `edit ${i}\n`);
      child.stdin.write(writeEvents(file, `edit ${i}\n`));
    }
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect(await remoteVersion(server.url)).toBe(1);
    expect((await remoteFiles(server.url)).get("hot.txt")?.toString()).toBe("edit 20\n");
  });

  it("should stop syncing on a wrong token with one error, journal the files and exit 1", async () => {
    server = await startMemoryRef("right-token");
    const input = await playedSession();
    const result = await runCli(watchArgs(server.url, "--token", "wrong-token"), { input });
    expect(result.code).toBe(1);
    expect(result.stdout.toString()).toBe(input);
    expect(result.stderr.match(/401/g)?.length).toBeGreaterThan(0);
    expect(result.stderr.match(/uspark: error: 401 unauthorized/g)).toHaveLength(1);
    expect(result.stderr).not.toContain("wrong-token");
    const journal = JSON.parse(readFileSync(path.join(root, ".uspark", "pending.json"), "utf8")) as { entries: { path: string }[] };
    expect(journal.entries.map((e) => e.path).sort()).toEqual([
      "README.md",
      "docs/notes.md",
      "notebooks/analysis.ipynb",
      "src/app.ts",
      "src/util.ts",
    ]);
    expect(readFileSync(path.join(root, ".uspark", "pending.json"), "utf8")).not.toContain("wrong-token");

    const next = await runCli(watchArgs(server.url, "--token", "right-token"), { input: "" });
    expect(next.stderr).toContain("5 files from an earlier run still unsynced");

    const retry = await runCli([
      "push",
      "--pending",
      "--project-id",
      "p1",
      "--api-url",
      server.url,
      "--token",
      "right-token",
      "--root",
      root,
    ]);
    expect(retry.code).toBe(0);
    expect((await remoteFiles(server.url, "p1", "right-token")).size).toBe(5);
  });

  it("should push what is pending on SIGTERM while stdin is still open", async () => {
    server = await startMemoryRef();
    const file = path.join(root, "pending.txt");
    writeFileSync(file, "written before the signal\n");
    const { child, result } = await startCli(watchArgs(server.url, "--debounce", "60000", "--max-wait", "60000", "--verbose"));
    child.stdin.write(writeEvents(file));
    await waitForOutput(child.stderr, (text) => text.includes("detected pending.txt"));
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code).toBe(0);
    expect((await remoteFiles(server.url)).get("pending.txt")?.toString()).toBe("written before the signal\n");
  });

  it("should journal at once and exit on a second signal", async () => {
    // Nothing listens on this port: the first signal's flush keeps retrying until the second.
    const unreachable = "http://127.0.0.1:9";
    const file = path.join(root, "stuck.txt");
    writeFileSync(file, "x");
    const { child, result } = await startCli(watchArgs(unreachable, "--verbose"));
    child.stdin.write(writeEvents(file));
    await waitForOutput(child.stderr, (text) => text.includes("detected stuck.txt"));
    child.kill("SIGTERM");
    await waitForOutput(child.stderr, (text) => text.includes("pushing what is pending"));
    child.kill("SIGTERM");
    const done = await result;
    expect(done.code).toBe(143);
    const journal = JSON.parse(readFileSync(path.join(root, ".uspark", "pending.json"), "utf8")) as { entries: { path: string }[] };
    expect(journal.entries.map((e) => e.path)).toEqual(["stuck.txt"]);
  });

  it("should take the connection from the environment and never print the token", async () => {
    server = await startMemoryRef("env-secret-token");
    mkdirSync(path.join(root, "src"));
    const input = await playedSession();
    const result = await runCli(["watch-claude", "--root", root, "--no-fs-watch", "--verbose", "--log-format", "json"], {
      input,
      env: { USPARK_API_URL: server.url, USPARK_PROJECT_ID: "p1", USPARK_TOKEN: "env-secret-token" },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("env-secret-token");
    expect(result.stderr).toContain('"event":"commit"');
  });

  it("should read the token and API URL from ~/.uspark/config.json", async () => {
    server = await startMemoryRef("home-token");
    const home = path.join(root, "home");
    mkdirSync(path.join(home, ".uspark"), { recursive: true });
    writeFileSync(path.join(home, ".uspark", "config.json"), JSON.stringify({ token: "home-token", apiUrl: server.url }));
    const project = path.join(root, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "a.txt"), "a");
    const result = await runCli(["watch-claude", "--project-id", "p1", "--root", project, "--no-fs-watch"], {
      input: writeEvents(path.join(project, "a.txt")),
      env: { HOME: home, USPARK_API_URL: "", USPARK_TOKEN: "" },
    });
    expect(result.code).toBe(0);
    expect((await remoteFiles(server.url, "p1", "home-token")).get("a.txt")?.toString()).toBe("a");
  });
});

describe("usage errors", () => {
  const cases: [string, string[], RegExp][] = [
    ["a missing project id", ["watch-claude"], /no project id given.*--project-id/],
    [
      "plain http to another host",
      ["watch-claude", "--project-id", "p", "--api-url", "http://uspark.example.com"],
      /refusing plain http.*--insecure/,
    ],
    ["an invalid API URL", ["watch-claude", "--project-id", "p", "--api-url", "nope"], /invalid API URL/],
    ["an unknown option", ["watch-claude", "--bogus"], /unknown option '--bogus'/],
    ["a duration that is not a number", ["watch-claude", "--dry-run", "--debounce", "fast"], /--debounce takes a whole number/],
    [
      "a root that does not exist",
      ["watch-claude", "--dry-run", "--root", "/nonexistent/uspark"],
      /--root \/nonexistent\/uspark is not a directory/,
    ],
    ["an unknown agent", ["watch", "--dry-run", "--agent", "nope"], /argument 'nope' is invalid/],
  ];

  it.each(cases)("should exit 2 with one clear line for %s", async (_name, args, message) => {
    const result = await runCli(args, { env: { USPARK_PROJECT_ID: "", HOME: root } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout.length).toBe(0);
  });

  // --dry-run is a way out only where it needs no project (the watch commands); push and pull's dry runs ask the server.
  it.each([
    ["watch-claude", ["watch-claude"], true],
    ["run", ["run", "--", "true"], true],
    ["push --dry-run", ["push", "--dry-run"], false],
    ["pull --dry-run", ["pull", "--dry-run"], false],
    ["status", ["status"], false],
  ])("should offer --dry-run for a missing project id only where it helps: %s", async (_name, args, offered) => {
    const result = await runCli(args, { env: { USPARK_PROJECT_ID: "", HOME: root }, cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr.toString()).toMatch(/no project id given/);
    expect(result.stderr.toString().includes("--dry-run")).toBe(offered);
  });

  it("should show help with examples and exit 0", async () => {
    const result = await runCli(["watch-claude", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout.toString()).toContain("--project-id <id>");
    const top = await runCli(["--help"]);
    expect(top.stdout.toString()).toContain("Examples:");
  });
});
