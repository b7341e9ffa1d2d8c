import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { joinRel, walkFiles } from "../../src/reconcile/walk.js";
import { tempDir } from "../kit/sync.js";

let root: string;
let cleanupRoot: () => Promise<void>;

beforeEach(async () => {
  ({ dir: root, cleanup: cleanupRoot } = await tempDir());
});
afterEach(async () => {
  await cleanupRoot();
});

async function tree(files: Record<string, string>) {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
}

describe("walkFiles", () => {
  it("honours builtin ignores, nested .gitignore files (deeper wins), --ignore; no symlinks", async () => {
    await tree({
      ".gitignore": "*.log\nbuild/\n",
      "a.ts": "",
      "debug.log": "",
      "build/out.js": "",
      "node_modules/x/index.js": "",
      ".git/config": "",
      ".uspark/pending.json": "",
      "pkg/.gitignore": "!keep.log\nlocal.txt\n",
      "pkg/keep.log": "",
      "pkg/other.log": "",
      "pkg/local.txt": "",
      "pkg/src/b.ts": "",
      "tmp/c.ts": "",
    });
    await symlink(path.join(root, "a.ts"), path.join(root, "link.ts"));
    await symlink("/etc", path.join(root, "etc"));
    const files: string[] = [];
    for await (const run of walkFiles({ root, ignore: ["tmp/"] })) files.push(...run.names.map((name) => joinRel(run.rel, name)));
    expect(files).toEqual([".gitignore", "a.ts", "pkg/.gitignore", "pkg/keep.log", "pkg/src/b.ts"]);
  });

  it("applies the .gitignore files above a start directory", async () => {
    await tree({ ".gitignore": "*.tmp\n", "sub/a.ts": "", "sub/b.tmp": "" });
    const files: string[] = [];
    for await (const run of walkFiles({ root, start: path.join(root, "sub") }))
      files.push(...run.names.map((name) => joinRel(run.rel, name)));
    expect(files).toEqual(["sub/a.ts"]);
  });
});
