import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWatcher, Reporter, UsageError } from "../src/index.js";
import { notSyncedHeadline } from "../src/watcher/watcher.js";
import { remoteFiles, startRef, tempDir, type RefServer } from "./kit/sync.js";

let root: string;
let cleanup: () => Promise<void>;
let server: RefServer;
const quiet = new Reporter({ verbosity: "quiet", stream: { write: () => true } });

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-api-"));
  server = await startRef();
});
afterEach(async () => {
  await server.stop();
  await cleanup();
});

/** Messages as the Claude Agent SDK yields them: the stream-json shape, already parsed. */
function sdkWrite(id: string, file: string) {
  return [
    {
      type: "assistant",
      session_id: "s",
      parent_tool_use_id: null,
      message: { role: "assistant", content: [{ type: "tool_use", id, name: "Write", input: { file_path: file, content: "…" } }] },
    },
    {
      type: "user",
      session_id: "s",
      parent_tool_use_id: null,
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
    },
  ];
}

describe("createWatcher", () => {
  it("should sync files announced by parsed Agent SDK messages", async () => {
    writeFileSync(path.join(root, "a.ts"), "export const a = 1;\n");
    const watcher = createWatcher({ root, agent: "claude", apiUrl: server.url, projectId: "p1", fsWatch: false, report: quiet });
    for (const message of sdkWrite("t1", path.join(root, "a.ts"))) watcher.message(message);
    const summary = await watcher.end();
    expect(summary).toMatchObject({ agent: "claude", detected: 1, refused: 0, exitCode: 0 });
    expect(summary.sync).toMatchObject({ commits: 1, pushed: 1 });
    expect((await remoteFiles(server.url)).get("a.ts")?.toString()).toBe("export const a = 1;\n");
  });

  it("should sync from raw stream bytes in arbitrary chunks and detect the agent", async () => {
    writeFileSync(path.join(root, "b.ts"), "b");
    const watcher = createWatcher({ root, apiUrl: server.url, projectId: "p1", fsWatch: false, report: quiet });
    const bytes = Buffer.from(
      sdkWrite("t2", path.join(root, "b.ts"))
        .map((m) => JSON.stringify(m) + "\n")
        .join(""),
    );
    for (let i = 0; i < bytes.length; i += 7) watcher.write(bytes.subarray(i, i + 7));
    const summary = await watcher.end();
    expect(summary.agent).toBe("claude");
    expect((await remoteFiles(server.url)).get("b.ts")?.toString()).toBe("b");
  });

  it("should refuse paths outside the root and count them", async () => {
    const watcher = createWatcher({ root, agent: "claude", dryRun: true, fsWatch: false, report: quiet });
    for (const message of sdkWrite("t3", "/etc/passwd")) watcher.message(message);
    expect(await watcher.end()).toMatchObject({ detected: 0, refused: 1, exitCode: 0 });
  });

  it("should reject bad options with a UsageError", () => {
    expect(() => createWatcher({ root, agent: "nope", dryRun: true })).toThrow(UsageError);
    expect(() => createWatcher({ root })).toThrow(/project id/);
  });
});

describe("notSyncedHeadline", () => {
  const cut = "the last scan of the tree was cut short by --timeout";
  it.each([
    [{ files: 2, conflicts: 0, scanCutShort: false }, "2 files not synced"],
    [{ files: 1, conflicts: 0, scanCutShort: true }, `1 file not synced (${cut})`],
    // Nothing named: the scan that would have found it did not finish (the server stopped answering).
    [{ files: 0, conflicts: 0, scanCutShort: true }, `not all synced (${cut}; the next start's scan finds what it missed)`],
    [{ files: 0, conflicts: 0, stopped: "401 unauthorized", scanCutShort: false }, "not all synced (syncing stopped: 401 unauthorized)"],
    [{ files: 3, conflicts: 0, stopped: "403 forbidden", scanCutShort: true }, "3 files not synced (syncing stopped: 403 forbidden)"],
    [{ files: 0, conflicts: 1, scanCutShort: false }, "1 conflict open"],
    [{ files: 2, conflicts: 2, scanCutShort: false }, "2 conflicts open, 2 files not synced"],
  ])("%j says %j", (left, headline) => {
    expect(notSyncedHeadline(left)).toBe(headline);
  });
});
