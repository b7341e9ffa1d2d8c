import { stat, writeFile } from "node:fs/promises";
import { statePath } from "../../src/reconcile/state-store.js";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ScanLoop } from "../../src/sync/scan-loop.js";
import { createSyncSession } from "../../src/sync/index.js";
import { captureReporter, remoteFiles, syncOptions, useTestProject, eventually } from "../kit/sync.js";

const project = useTestProject({ prefix: "uspark-loop-" });

function startLoop(everyMs: number) {
  const log = captureReporter();
  const session = createSyncSession(syncOptions(project.root, project.server.url, log.reporter));
  return { session, log, loop: new ScanLoop({ session, report: log.reporter, everyMs, twoWay: false }) };
}

describe("the scan loop", () => {
  it("syncs, on the next periodic rescan, a file no event announced", async () => {
    const { session, loop, log } = startLoop(50);
    await writeFile(path.join(project.root, "unseen.txt"), "found by a rescan");
    await eventually(async () => (await remoteFiles(project.server.url)).has("unseen.txt"), 10_000, "the rescan's commit");
    loop.stop();
    await session.finish(5000);
    expect(log.events("scan").every((r) => r.cause === "rescan")).toBe(true);
  });

  it("reads no file again on a rescan of a tree that did not change", async () => {
    const { session, loop, log } = startLoop(0);
    await writeFile(path.join(project.root, "a.txt"), "a");
    await loop.run("start");
    await eventually(async () => (await remoteFiles(project.server.url)).has("a.txt"), 10_000, "the commit");
    // A stat is trusted once a save of the state file that finished before it was read is newer than
    // the file (a file system clock behind ours cannot fool it): at most one more read after the
    // save (none when the session's first save was already newer than the file), then none.
    const written = (await stat(path.join(project.root, "a.txt"))).mtimeMs;
    await eventually(
      async () => ((await stat(statePath(project.root)).catch(() => undefined))?.mtimeMs ?? 0) > written,
      10_000,
      "the state file's save",
    );
    await loop.run("rescan");
    await loop.run("rescan");
    await loop.run("rescan");
    loop.stop();
    await session.finish(5000);
    const hashed = log.events("scan").map((r) => r.hashed as number);
    expect(hashed[0]).toBe(1);
    expect(hashed[1]).toBeLessThanOrEqual(1);
    expect(hashed.slice(2)).toEqual([0, 0]);
  });
});
