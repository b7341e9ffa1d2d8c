import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../kit/cli.js";
import { commitFiles } from "../kit/remote.js";
import { perTest } from "../kit/fixtures.js";

/**
 * A delete of a file this tree never synced (no base entry: a fresh clone beside a remote that has
 * it, deleted before the first scan) is said, with the way to delete it remotely, and counted:
 * it was dropped without a word ("0 deleted", exit 0) while the remote kept the file.
 */

const t = perTest("uspark-unsynced-delete-", { server: true });

describe("a delete of a file never synced here", () => {
  it("is one warning with the way to delete it remotely, counted in the summary (exit 1); the remote keeps it", async () => {
    await commitFiles(t.server!.url, "p", "tok", { "kept.txt": "k\n", "gone.txt": "g\n" });
    writeFileSync(path.join(t.root, "kept.txt"), "k\n"); // the clone: no .uspark/state.json, gone.txt deleted
    const gone = path.join(t.root, "gone.txt");
    const stream =
      JSON.stringify({
        type: "item.completed",
        item: { id: "i1", type: "file_change", status: "completed", changes: [{ path: gone, kind: "delete" }] },
      }) + "\n";
    const env = { USPARK_API_URL: t.server!.url, USPARK_TOKEN: "tok", USPARK_PROJECT_ID: "p" };
    const result = await runCli(["watch", "--agent", "codex", "--no-fs-watch", "--debounce", "20"], {
      cwd: t.root,
      env,
      input: stream,
      timeoutMs: 30_000,
    });
    expect(result.code, result.stderr).toBe(1);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("uspark pull gone.txt"));
    expect(warnings, result.stderr).toEqual([
      expect.stringContaining("warning: not deleted remotely gone.txt: deleted here before this tree ever synced it"),
    ]);
    expect(result.stderr).toMatch(/not synced \(deleted here before this tree ever synced it[^)]*\): gone\.txt/);
    const listing = (await (await fetch(`${t.server!.url}/api/projects/p/files`)).json()) as { files: { path: string }[] };
    expect(listing.files.map((f) => f.path)).toEqual(["gone.txt", "kept.txt"]);
  });
});
