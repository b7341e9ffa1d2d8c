import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "../kit/cli.js";
import { perTest } from "../kit/fixtures.js";
import { commitFiles } from "../kit/remote.js";
import { startMemoryRef } from "../kit/sync.js";

/** `uspark projects [create <id>]` and an unknown project, through the built CLI and the reference server. */

const t = perTest("uspark-cli-projects-", { server: true });
const api = () => ["--api-url", t.server!.url];

describe("uspark projects", () => {
  it("on a server with no project yet says how to make one (stderr), stdout empty; offers no --project-id or --create, still takes them", async () => {
    const server = await startMemoryRef(undefined, { projects: [] });
    const api = () => ["--api-url", server.url];
    onTestFinished(() => server.stop());
    const empty = await runCli(["projects", ...api()]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout.length).toBe(0);
    expect(empty.stderr).toContain("no projects this token can see yet: create one with `uspark projects create <id>`");
    expect((await runCli(["projects", ...api(), "--json"])).stdout.toString()).toBe('{"projects":[]}\n');
    const help = (await runCli(["projects", "--help"])).stdout.toString();
    const options = help.slice(help.indexOf("Options:"), help.indexOf("Commands:"));
    expect(options).toContain("--api-url");
    expect(options).not.toMatch(/--project-id|--create/);
    expect((await runCli(["projects", ...api(), "--project-id", "x", "--create"])).code).toBe(0);
  });

  it("creates a project with the connection flags after the id; a second create is exit 1, said plainly", async () => {
    const made = await runCli(["projects", "create", "my-app", ...api()]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain("created project my-app");
    const again = await runCli(["projects", "create", "my-app", ...api()]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("project my-app already exists");
  });

  it("lists the projects on stdout, as a table and as JSON", async () => {
    expect((await runCli(["projects", "create", "listed", ...api()])).code).toBe(0);
    const table = await runCli(["projects", ...api()]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.toString()).toMatch(/^listed\b/m);
    const json = await runCli(["projects", ...api(), "--json"]);
    expect((JSON.parse(json.stdout.toString()) as { projects: { id: string }[] }).projects.map((p) => p.id)).toContain("listed");
  });

  it("lines its table's columns up, whatever the widths of the versions and counts", async () => {
    expect((await runCli(["projects", "create", "wide-project-name", ...api()])).code).toBe(0);
    await commitFiles(t.server!.url, "wide-project-name", "", Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}.txt`, "x"])));
    const lines = (await runCli(["projects", ...api()])).stdout.toString().trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(1);
    // Each column starts at the same offset on every line: the version's "v", the count, the time.
    for (const column of [/ v\d/, / \d+ files?/, / \d{4}-\d\d-\d\dT/])
      expect(new Set(lines.map((line) => line.search(column))).size, `${column}: ${lines.join(" | ")}`).toBe(1);
  });

  it("an id the API cannot hold is a usage error (exit 2) before any request", async () => {
    const before = t.server!.requests.length;
    const bad = await runCli(["projects", "create", "a/b", ...api()]);
    expect(bad.code).toBe(2);
    expect(t.server!.requests.length).toBe(before);
  });

  it("a push to a project never created is exit 2 naming the nearest ids; --create makes it", async () => {
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    const push = (...extra: string[]) => runCli(["push", "--project-id", "p2", ...api(), "--root", t.root, ...extra]);
    const unknown = await push();
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/project p2 does not exist on the server .*p1/);
    // Nothing remembers the unknown id for the next command run here.
    expect(existsSync(path.join(t.root, ".uspark", "state.json"))).toBe(false);
    const created = await push("--create");
    expect(created.code, created.stderr).toBe(0);
  });

  it("a watch of a project never created is exit 2 and leaves no state file remembering it", async () => {
    writeFileSync(path.join(t.root, "a.txt"), "a\n");
    const watch = await runCli(["watch", "--project-id", "p2", ...api(), "--root", t.root, "--no-fs-watch"], { input: "{}\n" });
    expect(watch.code, watch.stderr).toBe(2);
    expect(existsSync(path.join(t.root, ".uspark", "state.json"))).toBe(false);
  });
});
