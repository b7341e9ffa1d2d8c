import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createPathPolicy } from "../../src/paths.js";
import { ScanLoop } from "../../src/scan/loop.js";
import { createTreeScanner } from "../../src/scan/scanner.js";
import { createSyncSession } from "../../src/sync/index.js";
import { captureReporter, remoteFiles, syncOptions, useTestProject, waitFor } from "../sync/helpers.js";

const project = useTestProject({ prefix: "uspark-loop-" });

function startLoop(everyMs: number) {
  const log = captureReporter();
  const session = createSyncSession(syncOptions(project.root, project.server.url, log.reporter, { startedAt: Date.now() }));
  const scanner = createTreeScanner({ root: project.root, policy: createPathPolicy({ root: project.root }), maxFileSize: 1 << 20, report: log.reporter });
  return { session, log, loop: new ScanLoop({ scanner, session, report: log.reporter, everyMs }) };
}

describe("the scan loop", () => {
  it("syncs, on the next periodic rescan, a file no event announced", async () => {
    const { session, loop, log } = startLoop(50);
    await writeFile(path.join(project.root, "unseen.txt"), "found by a rescan");
    await waitFor(async () => (await remoteFiles(project.server.url)).has("unseen.txt"), 10_000, "the rescan's commit");
    loop.stop();
    await session.finish(5000);
    expect(log.events("scan").every((r) => r.cause === "rescan")).toBe(true);
  });

  it("reads no file again on a rescan of a tree that did not change", async () => {
    const { session, loop, log } = startLoop(0);
    await writeFile(path.join(project.root, "a.txt"), "a");
    await loop.run("start");
    await session.finish(5000);
    await loop.run("rescan");
    await loop.run("rescan");
    const hashed = log.events("scan").map((r) => r.hashed);
    expect(hashed).toEqual([0, 1, 0]);
  });
});
