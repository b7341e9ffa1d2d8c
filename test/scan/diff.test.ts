import { describe, expect, it } from "vitest";
import { diffTree, renameCandidates, type DiffBase, type SnapshotEntry } from "../../src/scan/diff.js";

const file = (mtimeMs: number, sha256?: string): SnapshotEntry => ({ size: 1, mtimeMs, sha256 });
const complete = (files: Record<string, string>): DiffBase => ({ files: new Map(Object.entries(files)), complete: true, since: 0 });
const partial = (files: Record<string, string>, since: number): DiffBase => ({ files: new Map(Object.entries(files)), complete: false, since });

describe("diffTree", () => {
  it.each<[string, Record<string, SnapshotEntry>, DiffBase, string[]]>([
    ["an empty tree and an empty base: nothing", {}, complete({}), []],
    ["a file equal to the base: nothing", { a: file(5, "h1") }, complete({ a: "h1" }), []],
    ["a file edited since the base: a write", { a: file(5, "h2") }, complete({ a: "h1" }), ["write a"]],
    ["a base file that is gone: a delete", {}, complete({ a: "h1" }), ["delete a"]],
    ["a file the base knows but could not be hashed: a write (the engine says why)", { a: file(5) }, complete({ a: "h1" }), ["write a"]],
    ["a file new to a complete base, however old: a write", { n: file(1) }, complete({}), ["write n"]],
    ["no base: a file modified before the start is left alone", { old: file(99) }, partial({}, 100), []],
    ["no base: a file modified at the start is a write", { at: file(100) }, partial({}, 100), ["write at"]],
    ["no base: a file modified after the start is a write", { late: file(101) }, partial({}, 100), ["write late"]],
    ["a partial base: a known file is judged by hash, whatever its mtime", { a: file(1, "h2"), b: file(500, "h3") }, partial({ a: "h1", b: "h3" }, 100), ["write a"]],
    ["a partial base: a known file that is gone is a delete", {}, partial({ a: "h1" }, 100), ["delete a"]],
    ["a partial base: a rename (`mv` keeps the old mtime) is a write of the new name and a delete", { new: file(1, "h1") }, partial({ old: "h1" }, 100), ["write new", "delete old"]],
    ["a partial base: an old unknown file with other content than what went is left alone", { other: file(1, "h9") }, partial({ old: "h1" }, 100), ["delete old"]],
    [
      "several at once, in tree order then deletes",
      { a: file(1, "h1"), b: file(1, "x"), c: file(1) },
      complete({ a: "h1", b: "h2", d: "h4" }),
      ["write b", "write c", "delete d"],
    ],
  ])("%s", (_, tree, base, expected) => {
    const targets = diffTree(new Map(Object.entries(tree)), base);
    expect(targets.map((t) => `${t.kind} ${t.remote}`)).toEqual(expected);
  });

  it("asks for the hash of old unknown files only when a base file is gone from a partial base", () => {
    const tree = new Map(Object.entries({ known: file(1, "h1"), oldUnknown: file(1), newUnknown: file(200) }));
    expect(renameCandidates(tree, partial({ known: "h1" }, 100))).toEqual([]);
    expect(renameCandidates(tree, partial({ known: "h1", gone: "h2" }, 100))).toEqual(["oldUnknown"]);
    expect(renameCandidates(tree, complete({ known: "h1", gone: "h2" }))).toEqual([]);
  });
});
