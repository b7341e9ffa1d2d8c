import { existsSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitForOutput } from "../kit/cli.js";
import { remoteFiles, useTestProject } from "../kit/sync.js";

const project = useTestProject({ prefix: "uspark-cli-scan-" });

const watch = (...extra: string[]) => [
  "watch",
  "--project-id",
  "p1",
  "--api-url",
  project.server.url,
  "--root",
  project.root,
  "--debounce",
  "20",
  ...extra,
];
const text = async () => new Map([...(await remoteFiles(project.server.url))].map(([k, v]) => [k, v.toString()]));
const hourAgo = () => new Date(Date.now() - 3600_000);

/** Claude Write calls of these files (already on disk) and their successful results. */
function writeEvents(...files: string[]): string {
  return files
    .map((file, i) =>
      [
        {
          type: "assistant",
          session_id: "s",
          message: {
            content: [{ type: "tool_use", id: `t${i}`, name: "Write", input: { file_path: path.join(project.root, file), content: "" } }],
          },
        },
        { type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "ok" }] } },
      ]
        .map((event) => JSON.stringify(event) + "\n")
        .join(""),
    )
    .join("");
}

/** `sed -i`: the new content goes to a temp file that is renamed over the old one. */
function sedInPlace(file: string, content: string): void {
  writeFileSync(`${file}.sedtmp`, content);
  renameSync(`${file}.sedtmp`, file);
}

describe("scans through the built CLI", () => {
  it("syncs a sed -i made 0 ms after spawn, before the file watcher is ready", async () => {
    const file = path.join(project.root, "config.ini");
    writeFileSync(file, "mode=old\n");
    utimesSync(file, hourAgo(), hourAgo());
    const { child, result } = await startCli(watch());
    sedInPlace(file, "mode=new\n");
    child.stdin.end();
    const done = await result;
    expect(done.stderr).not.toMatch(/not synced/);
    expect(done.code).toBe(0);
    expect((await text()).get("config.ini")).toBe("mode=new\n");
  });

  it("pushes an offline edit and an offline delete at the next watch, by hash, whatever the mtime", async () => {
    writeFileSync(path.join(project.root, "kept.txt"), "v1\n");
    writeFileSync(path.join(project.root, "gone.txt"), "bye\n");
    const first = await runCli(watch("--no-fs-watch", "--agent", "claude"), { input: writeEvents("kept.txt", "gone.txt") });
    expect(first.code).toBe(0);
    expect([...(await text()).keys()].sort()).toEqual(["gone.txt", "kept.txt"]);
    const state = readFileSync(path.join(project.root, ".uspark", "state.json"), "utf8");
    expect(state).toContain("kept.txt");

    // While nothing runs: an edit that keeps an old mtime, and a delete.
    writeFileSync(path.join(project.root, "kept.txt"), "v2\n");
    utimesSync(path.join(project.root, "kept.txt"), hourAgo(), hourAgo());
    rmSync(path.join(project.root, "gone.txt"));
    const second = await runCli(watch("--no-fs-watch"));
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/synced: 1 file pushed, 1 deleted/);
    expect(await text()).toEqual(new Map([["kept.txt", "v2\n"]]));

    // Nothing changed: the third watch has nothing to do.
    const third = await runCli(watch("--no-fs-watch"));
    expect(third.stderr).toMatch(/synced: 0 files pushed, 0 deleted, 0 unchanged in 0 commits/);
  });

  it("does not delete remotely most of the synced files when they are missing at start: exit 1, said once", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `f${i}.txt`);
    for (const name of names) writeFileSync(path.join(project.root, name), `${name}\n`);
    const first = await runCli(watch("--no-fs-watch", "--agent", "claude"), { input: writeEvents(...names) });
    expect(first.code).toBe(0);
    // While nothing runs, most of the tree goes (an unmounted volume, a half checkout).
    for (const name of names.slice(1)) rmSync(path.join(project.root, name));

    const second = await runCli(watch());
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr.match(/11 of the 12 files last synced are missing here: not deleting them on the other side/g)).toHaveLength(1);
    expect(second.stderr).toMatch(/11 files not synced/);
    expect((await text()).size).toBe(12);

    // `push --delete --force` is how a user says the deletes are meant; the next watch is clean.
    const forced = await runCli([
      "push",
      "--project-id",
      "p1",
      "--api-url",
      project.server.url,
      "--root",
      project.root,
      "--delete",
      "--force",
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    expect([...(await text()).keys()]).toEqual(["f0.txt"]);
    const after = await runCli(watch());
    expect(after.code, after.stderr).toBe(0);
  });

  it("syncs a rename made by a shell (mv keeps the old mtime) with no file watcher, in a session and offline", async () => {
    for (const name of ["old.txt", "offline-old.txt"]) {
      writeFileSync(path.join(project.root, name), `${name}\n`);
      utimesSync(path.join(project.root, name), hourAgo(), hourAgo());
    }
    // A first watch with no base: what it syncs is all its (partial) base knows.
    const first = await runCli(watch("--no-fs-watch", "--agent", "claude"), { input: writeEvents("old.txt", "offline-old.txt") });
    expect(first.code).toBe(0);

    renameSync(path.join(project.root, "offline-old.txt"), path.join(project.root, "offline-new.txt"));
    const { child, result } = await startCli(watch("--no-fs-watch", "--verbose"));
    await waitForOutput(child.stderr, (t) => /start scan: /.test(t), 5000);
    renameSync(path.join(project.root, "old.txt"), path.join(project.root, "new.txt"));
    child.stdin.end();
    const done = await result;
    expect(done.code, done.stderr).toBe(0);
    expect(await text()).toEqual(
      new Map([
        ["new.txt", "old.txt\n"],
        ["offline-new.txt", "offline-old.txt\n"],
      ]),
    );
  });

  it("syncs at the end of the session an edit no event announced", async () => {
    const { child, result } = await startCli(watch("--no-fs-watch", "--verbose"));
    // After the start scan, so that only the end scan can find it (a build without scans: after the bound).
    await waitForOutput(child.stderr, (t) => /start scan: /.test(t), 5000).catch(() => "");
    writeFileSync(path.join(project.root, "quiet.txt"), "made by a shell, seen by no watcher\n");
    child.stdin.end();
    const done = await result;
    expect(done.code).toBe(0);
    expect((await text()).get("quiet.txt")).toBe("made by a shell, seen by no watcher\n");
  });

  it("exits 1 and names a file the API cannot store (a backslash in its name)", async () => {
    writeFileSync(path.join(project.root, "a\\b.txt"), "x");
    writeFileSync(path.join(project.root, "fine.txt"), "x");
    const done = await runCli(watch());
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("not synced (a backslash in the name cannot be stored remotely): a\\b.txt");
    expect(done.stderr).toMatch(/1 file not synced; 1 file pushed/);
    expect((await text()).get("fine.txt")).toBe("x");
  });

  it("push, too, exits 1 and names the files the API cannot store (a backslash, a name not UTF-8)", async () => {
    writeFileSync(path.join(project.root, "a\\b.txt"), "x");
    writeFileSync(Buffer.from(`${project.root}/caf\xe9.txt`, "latin1"), "x");
    writeFileSync(path.join(project.root, "fine.txt"), "x");
    const push = (...extra: string[]) =>
      runCli(["push", "--project-id", "p1", "--api-url", project.server.url, "--root", project.root, ...extra]);
    const dry = await push("--dry-run");
    expect(dry.code).toBe(1);
    const done = await push();
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("not synced (a backslash in the name cannot be stored remotely): a\\b.txt");
    expect(done.stderr).toContain("not synced (the name is not valid UTF-8): caf\\xe9.txt");
    expect(done.stderr).toMatch(/1 file pushed in 1 commit, 0 unchanged, 2 not synced/);
    expect([...(await text()).keys()]).toEqual(["fine.txt"]);
  });

  it("does not count a tool call's path outside the root: a warning, exit 0", async () => {
    const outside = path.join(path.dirname(project.root), "elsewhere.txt");
    const done = await runCli(watch("--no-fs-watch", "--agent", "claude"), { input: writeEvents(path.relative(project.root, outside)) });
    expect(done.stderr).toMatch(/outside the project root/);
    expect(done.code).toBe(0);
    expect(existsSync(path.join(project.root, ".uspark", "pending.json"))).toBe(false);
  });
});
