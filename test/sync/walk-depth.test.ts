import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IgnoreEngine } from "../../src/ignore/engine.js";
import { walkFiles, type FileRun } from "../../src/reconcile/walk.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A walk of a deep tree (issue 22: a scan's time grew about cubically with depth; 600 levels took
 * 43 s) is linear in depth, and stops between directories when its signal is aborted. The
 * figures are bench/depth.mjs's; here only that a deep walk completes, in order, and stops.
 */
const t = perTest("uspark-walk-depth-");

/** `depth` nested directories d/d/…, `a.txt` and `b.log` in each, and a .gitignore at `ignoreAt` that ignores `*.log`. */
function chain(depth: number, ignoreAt: number): string[] {
  const files: string[] = [];
  let dir = t.root;
  for (let level = 0; level < depth; level++) {
    writeFileSync(path.join(dir, "a.txt"), `level ${level}\n`);
    writeFileSync(path.join(dir, "b.log"), "ignored\n");
    if (level === ignoreAt) writeFileSync(path.join(dir, ".gitignore"), "*.log\n");
    files.push(path.join(dir, "a.txt"));
    dir = path.join(dir, "d");
    mkdirSync(dir);
  }
  return files;
}

/** The files a walk hands out, as absolute paths, in order. */
async function collect(walk: AsyncIterable<FileRun>): Promise<string[]> {
  const seen: string[] = [];
  for await (const run of walk) for (const name of run.names) seen.push(path.join(run.dir, name));
  return seen;
}

describe("walking a deep tree", () => {
  it("should walk 600 levels depth first, applying a .gitignore from high up all the way down", { timeout: 20_000 }, async () => {
    const expected = chain(600, 3);
    const engine = new IgnoreEngine({ root: t.root });
    const walked = await collect(walkFiles({ root: t.root, ignoreEngine: engine }));
    const logs = walked.filter((file) => file.endsWith(".log"));
    // Above the .gitignore the logs are files like any other; below it none is.
    expect(logs).toHaveLength(3);
    expect(walked.filter((file) => file.endsWith("a.txt"))).toEqual(expected);
  });

  it("should stop between directories once its signal is aborted", async () => {
    chain(300, -1);
    const controller = new AbortController();
    const seen: string[] = [];
    const walking = (async () => {
      for await (const run of walkFiles({ root: t.root, signal: controller.signal })) {
        seen.push(...run.names);
        if (seen.length >= 10) controller.abort(new Error("stop here"));
      }
    })();
    await expect(walking).rejects.toThrow("stop here");
    expect(seen.length).toBeLessThanOrEqual(12);
  });
});
