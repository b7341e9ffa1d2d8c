import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { emptyBase, type Base } from "../../src/reconcile/base.js";
import { fileStateStore } from "../../src/reconcile/state-store.js";

/**
 * A save merges into the state file as it is (state-store.ts): its own last write is not read
 * again (50,000 entries parsed per save made a first push quadratic), but a file another process
 * wrote since is, so its entries are kept.
 */

const SHA = (c: string) => c.repeat(64);
const KEY = { apiUrl: "http://127.0.0.1:1", projectId: "p" };
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function baseWith(files: Record<string, string>, key = KEY): Base {
  const base = emptyBase(key);
  for (const [p, c] of Object.entries(files)) base.files.set(p, { sha256: SHA(c), size: 1, mtimeMs: 1, ino: 1 });
  return base;
}

describe("saves of the state file one after another", () => {
  it("keep what another process wrote between them, of this project and of another", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "uspark-state-cache-"));
    const mine = fileStateStore(dir);
    const other = fileStateStore(dir);
    await mine.save(baseWith({ a: "a" }), new Set(["a"]));
    await mine.save(baseWith({ a: "a", b: "b" }), new Set(["b"])); // our own write, as we left it
    await other.save(baseWith({ c: "c" }), new Set(["c"]));
    await other.save(baseWith({ x: "d" }, { ...KEY, projectId: "q" }), new Set(["x"]));
    await mine.save(baseWith({ a: "a", b: "b", d: "d" }), new Set(["d"]));
    const reader = fileStateStore(dir);
    expect([...((await reader.load(KEY))?.files.keys() ?? [])].sort()).toEqual(["a", "b", "c", "d"]);
    expect([...((await reader.load({ ...KEY, projectId: "q" }))?.files.keys() ?? [])]).toEqual(["x"]);
  });
});
