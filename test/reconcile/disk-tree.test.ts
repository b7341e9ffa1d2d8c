import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { IgnoreEngine } from "../../src/ignore/engine.js";
import { DiskTree, pathRefusal } from "../../src/reconcile/disk-tree.js";
import { LocalChanged } from "../../src/reconcile/local-tree.js";
import { removeOwnTemps } from "../../src/state/own-temps.js";
import { sha256, tempDir } from "../kit/sync.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-disk-tree-"));
});
afterEach(() => cleanup());

describe("the disk tree's writes and deletes", () => {
  it("keep a local edit that left size, mtime and inode as they were (simulation seed 7): the content decides", async () => {
    const tree = new DiskTree({ root, ignore: new IgnoreEngine({ root }), maxFileSize: 1 << 20 });
    const file = path.join(root, "a.txt");
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000);
    await writeFile(file, "one");
    await utimes(file, tick, tick);
    const before = await stat(file);
    const expected = { sha256: sha256("one"), stat: { size: before.size, mtimeMs: before.mtimeMs, ino: before.ino } };
    // Rewritten in place within the same mtime tick, as far as the stat can tell.
    await writeFile(file, "two");
    await utimes(file, tick, tick);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
    await expect(tree.write("a.txt", new TextEncoder().encode("remote"), expected)).rejects.toBeInstanceOf(LocalChanged);
    await expect(tree.remove("a.txt", expected)).rejects.toBeInstanceOf(LocalChanged);
    expect(await readFile(file, "utf8")).toBe("two");
  });

  it("write through .uspark/tmp, leaving nothing beside the file; a temp file of ours beside one (another file system) is never listed", async () => {
    const tree = new DiskTree({ root, ignore: new IgnoreEngine({ root }), maxFileSize: 1 << 20 });
    await tree.write("a.txt", new TextEncoder().encode("remote"), null);
    expect(await readFile(path.join(root, "a.txt"), "utf8")).toBe("remote");
    expect(await readdir(root)).toEqual([".uspark", "a.txt"]);
    expect(await readdir(path.join(root, ".uspark", "tmp"))).toEqual([]);
    await writeFile(path.join(root, ".b.txt.uspark-0123456789ab.tmp"), "half");
    await writeFile(path.join(root, ".b.txt.uspark-notours.tmp"), "a user's");
    expect([...(await tree.list()).files.keys()].sort()).toEqual([".b.txt.uspark-notours.tmp", "a.txt"]);
  });

  it("leftovers of a process that is gone are removed at the next start; a live one's stay", async () => {
    const tmp = path.join(root, ".uspark", "tmp");
    await mkdir(tmp, { recursive: true });
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
    await writeFile(path.join(tmp, `${gone}-0a1b.tmp`), "half");
    await writeFile(path.join(tmp, `${process.pid}-0a1b.tmp`), "mine");
    // writeStateFile's own, of the state file or an intent: beside their targets in .uspark/.
    await writeFile(path.join(root, ".uspark", `state.json.${gone}-0123456789ab.tmp`), "half");
    await writeFile(path.join(root, ".uspark", `intent-k.json.${process.pid}-0123456789ab.tmp`), "mine");
    await removeOwnTemps(root);
    expect(await readdir(tmp)).toEqual([`${process.pid}-0a1b.tmp`]);
    expect((await readdir(path.join(root, ".uspark"))).filter((name) => name.endsWith(".tmp"))).toEqual([
      `intent-k.json.${process.pid}-0123456789ab.tmp`,
    ]);
  });

  it("a delete takes the directories it emptied with it, up to the synced directory; one holding anything else stays", async () => {
    const tree = new DiskTree({ root, prefix: "web", ignore: new IgnoreEngine({ root }), maxFileSize: 1 << 20 });
    const files = { "src/app/main.ts": "main", "src/keep/x.ts": "x", "only.ts": "only", "docs/a.md": "a", "lib/b.ts": "b" };
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, "web", rel)), { recursive: true });
      await writeFile(path.join(root, "web", rel), text);
    }
    await mkdir(path.join(root, "web", "docs", "drafts")); // an empty directory someone made: not ours to remove
    await writeFile(path.join(root, "web", "lib", ".b.ts.swp"), "an editor's file"); // not synced, still there
    const remove = async (rel: string) => {
      const now = await stat(path.join(root, "web", rel));
      await tree.remove(rel, {
        sha256: sha256(files[rel as keyof typeof files]),
        stat: { size: now.size, mtimeMs: now.mtimeMs, ino: now.ino },
      });
    };
    await remove("src/app/main.ts");
    await remove("docs/a.md");
    await remove("lib/b.ts");
    await remove("only.ts");
    await tree.flushDirectories();
    expect(await exists("web/src/app")).toBe(false);
    expect(await exists("web/src/keep/x.ts")).toBe(true);
    expect(await exists("web/docs/drafts")).toBe(true);
    expect(await exists("web/lib/.b.ts.swp")).toBe(true);
    await remove("src/keep/x.ts");
    expect(await exists("web/src")).toBe(false);
    expect(await exists("web")).toBe(true); // the synced directory itself, empty now
  });
});

async function exists(rel: string): Promise<boolean> {
  return stat(path.join(root, rel)).then(
    () => true,
    () => false,
  );
}

describe("pathRefusal: a project path that is never written or synced here, by its name alone", () => {
  it.each([
    ["src/a.ts", undefined],
    [".gitignore", undefined],
    ["docs/.github/x.yml", undefined],
    ["my.git/x", undefined],
    [".uspark-notes/a", undefined],
    [".git/config", "it is inside .git/, which is never written"],
    ["sub/.git", "it is inside .git/, which is never written"],
    ["sub/.GIT/HEAD", "it is inside .GIT/, which is never written"],
    ["a/.Uspark/state.json", "it is inside .Uspark/, which is never written"],
    ["a/../b", "path has a '..' segment"],
    ["", "path is empty"],
  ])("%j: %j", (p, why) => {
    expect(pathRefusal(p)).toBe(why);
  });
});
