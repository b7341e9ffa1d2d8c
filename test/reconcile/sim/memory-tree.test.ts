import { describe, expect, it } from "vitest";
import { WriteRefused } from "../../../src/reconcile/local-tree.js";
import { MemoryTree } from "./memory-tree.js";

/** The simulation's tree refuses what a disk refuses: a path is a file or a directory, never both. */
describe("MemoryTree: files and directories", () => {
  const tree = () => new MemoryTree("t", { now: () => 0, offsetMs: 0, granularityMs: 1 });
  const UTF8 = new TextEncoder();

  it("a user's edit under a file, or onto a directory, fails and changes nothing (ENOTDIR, EISDIR)", () => {
    const t = tree();
    expect(t.edit("x", "1")).toBe(true);
    expect(t.edit("x/y", "2")).toBe(false);
    expect(t.edit("d/a", "3")).toBe(true);
    expect(t.edit("d", "4")).toBe(false);
    expect(t.rename("x", "d")).toBe(false);
    expect([...t.files.keys()]).toEqual(["x", "d/a"]);
  });

  it("a file replaced by a directory of its name; the directory goes with its last file", () => {
    const t = tree();
    t.edit("x", "1");
    expect(t.fileToDir("x", "y", "2")).toBe(true);
    expect([...t.files.keys()]).toEqual(["x/y"]);
    t.delete("x/y");
    expect(t.edit("x", "3")).toBe(true);
  });

  it("the reconcile's write is refused as the disk tree refuses it (WriteRefused)", async () => {
    const t = tree();
    t.edit("x", "1");
    t.edit("d/a", "2");
    const api = t.api(async () => undefined);
    await expect(api.write("x/y", UTF8.encode("3"), null)).rejects.toThrow(new WriteRefused("x is a file here, not a directory"));
    await expect(api.write("d", UTF8.encode("3"), null)).rejects.toThrow(new WriteRefused("a directory is in its place here"));
    expect(await api.read("d")).toEqual({ kind: "missing" });
  });
});
