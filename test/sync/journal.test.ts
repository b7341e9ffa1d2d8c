import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  entriesFor,
  journalPath,
  mergeEntries,
  readJournal,
  removeSynced,
  updateJournal,
  writeJournal,
  type JournalEntry,
} from "../../src/sync/journal.js";
import { captureReporter, tempDir } from "../kit/sync.js";

const entry = (p: string, time: string, extra: Partial<JournalEntry> = {}): JournalEntry => ({
  apiUrl: "http://127.0.0.1:4400",
  projectId: "p1",
  path: p,
  local: `/root/${p}`,
  reason: "flush timeout",
  time,
  ...extra,
});

describe("journal (pure)", () => {
  it("merges per apiUrl + project + path; the newest wins", () => {
    const old = [entry("a", "2025-01-01T00:00:00Z", { reason: "old" }), entry("b", "2025-01-01T00:00:05Z", { reason: "b newer" })];
    const added = [entry("a", "2025-01-01T00:00:01Z", { reason: "new" }), entry("b", "2025-01-01T00:00:00Z", { reason: "b older" })];
    const merged = mergeEntries(old, added);
    expect(merged.map((e) => [e.path, e.reason]).sort()).toEqual([
      ["a", "new"],
      ["b", "b newer"],
    ]);
    // Same path, other project or API: separate entries. A trailing slash is the same API.
    const other = mergeEntries(old, [
      entry("a", "2025-01-02T00:00:00Z", { projectId: "p2" }),
      entry("a", "2025-01-02T00:00:00Z", { apiUrl: "http://127.0.0.1:4400/", reason: "slash" }),
    ]);
    expect(other).toHaveLength(3);
    expect(other.find((e) => e.path === "a" && e.projectId === "p1")!.reason).toBe("slash");
    expect(entriesFor(other, "http://127.0.0.1:4400/", "p2")).toHaveLength(1);
  });

  it("a later sync settles older entries only", () => {
    const entries = [entry("a", "2025-01-01T00:00:00Z"), entry("b", "2025-01-01T00:00:10Z")];
    const at = Date.parse("2025-01-01T00:00:05Z");
    const synced = [
      { apiUrl: "http://127.0.0.1:4400", projectId: "p1", path: "a", at },
      { apiUrl: "http://127.0.0.1:4400", projectId: "p1", path: "b", at },
    ];
    expect(removeSynced(entries, synced).map((e) => e.path)).toEqual(["b"]);
  });
});

describe("journal (files)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it("writes atomically: valid JSON, no temp files left, merged with what is there", async () => {
    await updateJournal(dir, { add: [entry("a", "2025-01-01T00:00:00Z")] });
    await updateJournal(dir, { add: [entry("b", "2025-01-01T00:00:00Z"), entry("a", "2025-01-01T00:00:09Z", { reason: "newer" })] });
    const files = await readdir(path.join(dir, ".uspark"));
    expect(files.sort()).toEqual([".gitignore", "pending.json"]);
    const data = JSON.parse(await readFile(journalPath(dir), "utf8"));
    expect(data.version).toBe(1);
    expect(data.entries.map((e: JournalEntry) => `${e.path}:${e.reason}`).sort()).toEqual(["a:newer", "b:flush timeout"]);
  });

  it("concurrent writers never leave a half-written file", async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => writeJournal(dir, [entry(`f${i}`, "2025-01-01T00:00:00Z")])));
    const entries = await readJournal(dir);
    expect(entries).toHaveLength(1);
    expect((await readdir(path.join(dir, ".uspark"))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("removes the file once nothing is left", async () => {
    await updateJournal(dir, { add: [entry("a", "2025-01-01T00:00:00Z")] });
    await updateJournal(dir, { synced: [{ apiUrl: "http://127.0.0.1:4400", projectId: "p1", path: "a", at: Date.now() }] });
    expect(await readdir(path.join(dir, ".uspark"))).toEqual([".gitignore"]);
  });

  it("a corrupt journal is moved aside with a warning, not overwritten", async () => {
    await mkdir(path.join(dir, ".uspark"));
    for (const bad of ["{not json", '{"version":1,"entries":[{"path":3}]}', "[]", '{"version":9,"entries":[]}']) {
      await writeFile(journalPath(dir), bad);
      const { reporter, events } = captureReporter();
      expect(await readJournal(dir, reporter)).toEqual([]);
      expect(events("journal-corrupt")).toHaveLength(1);
      const files = await readdir(path.join(dir, ".uspark"));
      const aside = files.find((f) => f.startsWith("pending.json.corrupt-"))!;
      expect(await readFile(path.join(dir, ".uspark", aside), "utf8")).toBe(bad);
      // Writing after that starts a new journal; the corrupt copy stays.
      await updateJournal(dir, { add: [entry("a", "2025-01-01T00:00:00Z")] }, reporter);
      expect((await readJournal(dir)).map((e) => e.path)).toEqual(["a"]);
      for (const f of await readdir(path.join(dir, ".uspark")))
        await import("node:fs/promises").then((fs) => fs.rm(path.join(dir, ".uspark", f)));
    }
  });
});
