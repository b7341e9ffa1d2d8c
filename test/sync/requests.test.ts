import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSyncSession } from "../../src/sync/index.js";
import { captureReporter, remoteFiles, startMemoryRef, syncOptions, tempDir, type RefServer } from "../kit/sync.js";

/** How many requests a 100-edit session over 10 files costs (printed, and bounded). */
let root: string;
let cleanupRoot: () => Promise<void>;
let server: RefServer;
beforeEach(async () => {
  ({ dir: root, cleanup: cleanupRoot } = await tempDir());
  server = await startMemoryRef();
});
afterEach(async () => {
  await server.stop();
  await cleanupRoot();
});

async function session100(debounceMs: number, maxWaitMs: number, gapMs: number) {
  const log = captureReporter();
  await mkdir(path.join(root, "src"));
  const session = createSyncSession(syncOptions(root, server.url, log.reporter, { debounceMs, maxWaitMs }));
  for (let i = 0; i < 100; i++) {
    const rel = `src/file${i % 10}.ts`;
    await writeFile(path.join(root, rel), `// edit ${i}\n`);
    session.add({ remote: rel, cause: "Edit" });
    await new Promise((r) => setTimeout(r, gapMs));
  }
  const result = await session.finish(30_000);
  const count = (method: string) => server.requests.filter((r) => r.method === method).length;
  const stats = { total: server.requests.length, get: count("GET"), put: count("PUT"), post: count("POST"), commits: result.commits };
  const remote = await remoteFiles(server.url);
  for (let f = 0; f < 10; f++) expect(remote.get(`src/file${f}.ts`)!.toString()).toBe(`// edit ${90 + f}\n`);
  return stats;
}

describe("request count", () => {
  it("100 edits over 10 files in 2 s, default debounce 300 / max wait 2000", async () => {
    const stats = await session100(300, 2000, 20);
    console.log("burst (edit every 20 ms):", JSON.stringify(stats));
    // Edits span a little over one max-wait: two batches (three on a slow machine).
    expect(stats.commits).toBeLessThanOrEqual(4);
    expect(stats.total).toBeLessThanOrEqual(1 + 4 * 11);
  });

  it("100 edits paced slower than the debounce: one batch per edit", async () => {
    const stats = await session100(20, 200, 45);
    console.log("paced (edit every 45 ms, debounce 20):", JSON.stringify(stats));
    expect(stats.total).toBeLessThanOrEqual(1 + 100 * 2);
  });
});
