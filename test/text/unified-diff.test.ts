import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../src/text/unified-diff.js";

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
