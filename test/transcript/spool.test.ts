import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StateDirError } from "../../src/state/state-dir.js";
import { openSpoolForAppend, readSpools, SpoolReader, writeSpoolMeta } from "../../src/transcript/spool.js";
import { captureReporter, tempDir } from "../kit/sync.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir("uspark-spool-"));
});
afterEach(() => cleanup());

const meta = { apiUrl: "http://127.0.0.1:1", projectId: "p", sessionId: "0b6f9d0e-1", base: 10, acked: 12 };

describe("transcript spool", () => {
  it("should read back appended bytes by stream offset", async () => {
    const handle = await openSpoolForAppend(root, meta.sessionId);
    await handle.write(Buffer.from("abcdef"));
    await handle.write(Buffer.from("ghi"));
    await handle.close();
    const reader = (await SpoolReader.open(root, meta.sessionId, 10))!;
    expect(reader.end).toBe(19);
    expect((await reader.read(12, 4)).toString()).toBe("cdef");
    expect((await reader.read(17, 100)).toString()).toBe("hi");
    await reader.close();
  });

  it("should refuse a spool file that is a symlink, and leave its target alone", async () => {
    const outside = path.join(root, "outside.txt");
    writeFileSync(outside, "keep");
    mkdirSync(path.join(root, ".uspark"));
    symlinkSync(outside, path.join(root, ".uspark", `transcript-${meta.sessionId}.ndjson`));
    await expect(openSpoolForAppend(root, meta.sessionId)).rejects.toThrow(StateDirError);
    expect(readFileSync(outside, "utf8")).toBe("keep");
  });

  it("should list the spools it can read and warn about the others", async () => {
    await writeSpoolMeta(root, meta);
    writeFileSync(path.join(root, ".uspark", "transcript-broken.json"), "{ not json");
    writeFileSync(path.join(root, ".uspark", "transcript-other.json"), JSON.stringify({ ...meta, sessionId: "someone-else" }));
    writeFileSync(path.join(root, ".uspark", "pending.json"), "{}");
    const { reporter, events } = captureReporter();
    expect(await readSpools(root, reporter)).toEqual([{ ...meta, pid: undefined }]);
    const warnings = events("transcript").map((r) => r.message);
    expect(warnings).toHaveLength(2);
    expect(warnings.some((w) => w.includes("transcript-broken.json")) && warnings.some((w) => w.includes("transcript-other.json"))).toBe(
      true,
    );
  });
});
