import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { diffLines, unifiedDiff } from "../../src/text/unified-diff.js";

/** The unified diff against the system's `diff -u` (GNU diffutils), the format every patch tool reads. */

function systemDiff(a: string, b: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "uspark-diff-"));
  try {
    writeFileSync(path.join(dir, "a"), a);
    writeFileSync(path.join(dir, "b"), b);
    try {
      execFileSync("diff", ["-u", "--label", "a/f", "--label", "b/f", "a", "b"], { cwd: dir, encoding: "utf8" });
      return "";
    } catch (error) {
      return (error as { stdout: string }).stdout;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines = (n: number, edit: (i: number) => string | undefined = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => edit(i))
    .filter((l) => l !== undefined)
    .map((l) => `${l}\n`)
    .join("");

describe("unifiedDiff", () => {
  const cases: [string, string, string][] = [
    ["equal", "a\nb\n", "a\nb\n"],
    ["one line replaced", "one\ntwo\nthree\n", "one\nTWO\nthree\n"],
    ["added at the end", "a\n", "a\nb\nc\n"],
    ["from nothing", "", "new\nfile\n"],
    ["to nothing", "old\nfile\n", ""],
    ["no newline at the end", "a\nb", "a\nc"],
    ["two hunks far apart", lines(40), lines(40, (i) => (i === 2 ? "changed" : i === 35 ? undefined : `line ${i}`))],
    ["two changes close together share a hunk", lines(20), lines(20, (i) => (i === 5 || i === 10 ? `x${i}` : `line ${i}`))],
  ];
  for (const [name, a, b] of cases) {
    it(`${name}: as diff -u`, () => {
      expect(unifiedDiff(a, b, "a/f", "b/f")).toBe(systemDiff(a, b));
    });
  }
});

describe("diffLines with a cap", () => {
  const a = lines(1500);
  const b = lines(1500, (i) => (i % 100 === 0 ? `changed ${i}` : `line ${i}`));

  it("is the start of the whole diff, cut at maxLines, and says it was cut", () => {
    const whole = diffLines(a, b, "a/f", "b/f");
    expect(whole.cut).toBe(false);
    expect(whole.lines.map((l) => `${l}\n`).join("")).toBe(systemDiff(a, b));
    const capped = diffLines(a, b, "a/f", "b/f", { maxLines: 50 });
    expect(capped.cut).toBe(true);
    expect(capped.lines).toEqual(whole.lines.slice(0, 50));
  });

  it("a cap at the diff's length cuts nothing; equal texts give no lines", () => {
    const whole = diffLines(a, b, "a/f", "b/f");
    expect(diffLines(a, b, "a/f", "b/f", { maxLines: whole.lines.length }).cut).toBe(false);
    expect(diffLines(a, a, "a/f", "b/f", { maxLines: 10 })).toEqual({ lines: [], cut: false, cells: 0 });
  });

  it("says the cells of the table it filled; a middle over maxCells is replaced whole and fills none", () => {
    const one = lines(20, (i) => (i === 10 ? "x" : `line ${i}`));
    expect(diffLines(lines(20), one, "a/f", "b/f").cells).toBe(4); // one line against one: 2 x 2
    const capped = diffLines(a, b, "a/f", "b/f", { maxCells: 100 });
    expect(capped.cells).toBe(0);
    expect(capped.lines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length).toBeGreaterThan(1000);
  });

  it("a middle too large for the table is shown replaced whole, still as diff -u reads it", () => {
    const big = lines(2500);
    const other = lines(2500, (i) => `other ${i}`);
    const whole = diffLines(big, other, "a/f", "b/f")
      .lines.map((l) => `${l}\n`)
      .join("");
    expect(whole.split("\n").filter((l) => l.startsWith("-") && !l.startsWith("---")).length).toBe(2500);
    expect(whole.startsWith("--- a/f\n+++ b/f\n@@ -1,2500 +1,2500 @@\n-line 0\n")).toBe(true);
  });
});
