import { describe, expect, it } from "vitest";
import { nextBase, planPull, type LocalState } from "../../src/lifecycle/plan.js";

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);
const file = (path: string, sha256 = A) => ({ path, sha256, size: 1 });
const here = (sha256: string): LocalState => ({ kind: "file", sha256 });
const missing: LocalState = { kind: "missing" };

describe("planPull: one listed file against the base and the local file", () => {
  // remote sha, base sha (undefined: not in the base; null: no base at all), local state, options → where it goes
  const rows: [string, string, string | undefined | null, LocalState, { force?: boolean }, keyof ReturnType<typeof planPull>][] = [
    ["new file", A, null, missing, {}, "downloads"],
    ["same content here", A, null, here(A), {}, "unchanged"],
    ["same content, base older", A, B, here(A), {}, "unchanged"],
    ["stale here, unchanged since the base", A, B, here(B), {}, "downloads"],
    ["changed here since the base", A, B, here(C), {}, "conflicts"],
    ["changed here, --force", A, B, here(C), { force: true }, "downloads"],
    ["differs and no base", A, null, here(B), {}, "conflicts"],
    ["differs, base has no entry for it", A, undefined, here(B), {}, "conflicts"],
    ["differs and no base, --force", A, null, here(B), { force: true }, "downloads"],
    ["deleted here since the base: restored", A, A, missing, {}, "downloads"],
    ["a symlink in the way", A, null, { kind: "blocked", reason: "symlink" }, { force: true }, "refusals"],
  ];
  it.each(rows)("%s", (_name, remoteSha, baseSha, local, options, where) => {
    const base = baseSha === null ? undefined : new Map(baseSha === undefined ? [["other", A]] : [["f.txt", baseSha]]);
    const plan = planPull([file("f.txt", remoteSha)], base, new Map([["f.txt", local]]), options);
    const placed = (Object.keys(plan) as (keyof typeof plan)[]).filter((k) => plan[k].some((x) => (typeof x === "string" ? x : x.path) === "f.txt"));
    expect(placed).toEqual([where]);
  });
});

describe("planPull: hostile listings are refused by name, whatever is on disk", () => {
  const hostile = ["../x", "/abs", ".git/config", ".uspark/state.json", "sub/.GIT/hooks/pre-commit", "a\0b", "a\\b", "x/./y", "a//b", "é".repeat(600), ""];
  it.each(hostile.map((p) => [JSON.stringify(p).slice(0, 40), p]))("%s", (_label, p) => {
    const plan = planPull([file(p)], undefined, new Map());
    expect(plan.refusals.map((r) => r.path)).toEqual([p]);
    expect(plan.downloads).toEqual([]);
  });

  it("the same path twice: both refused", () => {
    const plan = planPull([file("d.txt", A), file("d.txt", B), file("ok.txt")], undefined, new Map());
    expect(plan.refusals).toEqual([
      { path: "d.txt", reason: "listed 2 times" },
      { path: "d.txt", reason: "listed 2 times" },
    ]);
    expect(plan.downloads.map((f) => f.path)).toEqual(["ok.txt"]);
  });

  it("a file that is also a directory: both refused", () => {
    const plan = planPull([file("a"), file("a/b"), file("c")], undefined, new Map());
    expect(plan.refusals.map((r) => r.path).sort()).toEqual(["a", "a/b"]);
    expect(plan.downloads.map((f) => f.path)).toEqual(["c"]);
  });

  it("ignored paths are left out, not refused", () => {
    const plan = planPull([file("x.log"), file("y.txt")], undefined, new Map(), { ignored: (p) => p.endsWith(".log") });
    expect(plan.ignored).toEqual(["x.log"]);
    expect(plan.refusals).toEqual([]);
  });
});

describe("planPull: --delete", () => {
  const base = new Map([
    ["gone-clean.txt", A],
    ["gone-edited.txt", A],
    ["gone-already.txt", A],
    ["kept.txt", A],
  ]);
  const local = new Map<string, LocalState>([
    ["gone-clean.txt", here(A)],
    ["gone-edited.txt", here(B)],
    ["gone-already.txt", missing],
    ["kept.txt", here(A)],
  ]);

  it("deletes only files unchanged since the base that the remote no longer has", () => {
    const plan = planPull([file("kept.txt")], base, local, { delete: true });
    expect(plan.deletes).toEqual(["gone-clean.txt"]);
    expect(plan.conflicts.map((c) => c.path)).toEqual(["gone-edited.txt"]);
    expect(plan.unchanged).toEqual(["kept.txt"]);
  });

  it("deletes nothing without --delete", () => {
    const plan = planPull([file("kept.txt")], base, local);
    expect(plan.deletes).toEqual([]);
    expect(plan.conflicts).toEqual([]);
  });

  describe("a remote that suddenly lacks most of the base", () => {
    const names = Array.from({ length: 12 }, (_, i) => `f${i}.txt`);
    const wideBase = new Map(names.map((n) => [n, A]));
    const wideLocal = new Map(names.map((n) => [n, here(A)]));

    it("holds the deletes back when they are more than half of the base and more than 10 files", () => {
      const plan = planPull([file("f0.txt")], wideBase, wideLocal, { delete: true });
      expect(plan.deletes).toEqual([]);
      expect(plan.heldDeletes).toEqual(names.slice(1));
    });

    it("deletes them all with --force", () => {
      const plan = planPull([], wideBase, wideLocal, { delete: true, force: true });
      expect(plan.deletes).toEqual(names);
      expect(plan.heldDeletes).toEqual([]);
    });

    it("deletes up to half of the base without --force", () => {
      const plan = planPull(names.slice(6).map((n) => file(n)), wideBase, wideLocal, { delete: true });
      expect(plan.deletes).toEqual(names.slice(0, 6));
      expect(plan.heldDeletes).toEqual([]);
    });

    it("deletes 10 files of a base of 10, the small-project case", () => {
      const small = new Map(names.slice(0, 10).map((n) => [n, A]));
      expect(planPull([], small, wideLocal, { delete: true }).deletes).toHaveLength(10);
    });
  });
});

describe("nextBase", () => {
  it("records what now equals the remote, keeps the old entry of what was kept, forgets what was deleted", () => {
    const remote = [file("new.txt", A), file("same.txt", B), file("conflict.txt", C), file("failed.txt", A)];
    const base = new Map([["conflict.txt", A], ["failed.txt", B], ["deleted.txt", A], ["left.txt", A]]);
    const local = new Map<string, LocalState>([["same.txt", here(B)], ["conflict.txt", here(B)]]);
    const plan = planPull(remote, base, local);
    const next = nextBase(remote, base, plan, { written: new Set(["new.txt"]), deleted: new Set(["deleted.txt"]) });
    expect(Object.fromEntries(next)).toEqual({ "new.txt": A, "same.txt": B, "conflict.txt": A, "failed.txt": B, "left.txt": A });
  });
});
