// The page budget's decisions (src/server/web/page-budget.ts), as plain values.

import { describe, expect, it } from "vitest";
import {
  COMMIT_PAGE_BUDGET,
  FILE_DIFF_BUDGET,
  fileShare,
  linesWithin,
  MAX_DIFF_SIDE_BYTES,
  planDiff,
  spend,
  type Budget,
} from "../../../src/server/web/page-budget.js";

const KiB = 1024;
const full = (): Budget => ({ ...COMMIT_PAGE_BUDGET });

describe("planDiff", () => {
  it.each<[string, number | undefined, number | undefined, Budget, ReturnType<typeof planDiff>]>([
    ["a small change", 10 * KiB, 12 * KiB, full(), { kind: "diff" }],
    ["both sides at the limit", MAX_DIFF_SIDE_BYTES, MAX_DIFF_SIDE_BYTES, full(), { kind: "diff" }],
    ["a side past the limit", MAX_DIFF_SIDE_BYTES + 1, 10, full(), { kind: "summary", reason: "large" }],
    ["a 100 MiB file changed", 100 * KiB * KiB, 100 * KiB * KiB, full(), { kind: "summary", reason: "large" }],
    [
      "an added file: its head, at most a file's share",
      undefined,
      100 * KiB * KiB,
      full(),
      { kind: "head", readBytes: FILE_DIFF_BUDGET.bytes },
    ],
    ["a deleted small file: all of it", 300, undefined, full(), { kind: "head", readBytes: 300 }],
    ["an added file when little is left to read", undefined, 100 * KiB, { ...full(), readBytes: 5 }, { kind: "head", readBytes: 5 }],
    ["sides past what is left to read", 200 * KiB, 200 * KiB, { ...full(), readBytes: 300 * KiB }, { kind: "summary", reason: "budget" }],
    ["no lines left", 10, 10, { ...full(), lines: 0 }, { kind: "summary", reason: "budget" }],
    ["no bytes left", undefined, 10, { ...full(), bytes: 0 }, { kind: "summary", reason: "budget" }],
  ])("%s", (_, oldSize, newSize, left, plan) => {
    expect(planDiff(oldSize, newSize, left)).toEqual(plan);
  });
});

describe("fileShare, linesWithin and spend", () => {
  it("a file gets its own cap or what the page has left, whichever is less", () => {
    expect(fileShare(full())).toEqual({ lines: FILE_DIFF_BUDGET.lines, bytes: FILE_DIFF_BUDGET.bytes, cells: FILE_DIFF_BUDGET.cells });
    expect(fileShare({ ...full(), lines: 7, bytes: 100, cells: -5 })).toEqual({ lines: 7, bytes: 100, cells: 0 });
  });

  it("keeps whole lines within the bytes (each with its newline); a first line too long is cut to fit", () => {
    expect(linesWithin(["ab", "cd", "ef"], 6)).toEqual({ lines: ["ab", "cd"], bytes: 6, cut: true });
    expect(linesWithin(["ab", "cd"], 6)).toEqual({ lines: ["ab", "cd"], bytes: 6, cut: false });
    expect(linesWithin(["x".repeat(100)], 10)).toEqual({ lines: ["x".repeat(10)], bytes: 10, cut: true });
    expect(linesWithin(["é"], 3)).toEqual({ lines: ["é"], bytes: 3, cut: false });
  });

  it("spend takes what was spent off what is left", () => {
    const left = full();
    spend(left, { readBytes: 10, lines: 2, bytes: 30, cells: 4 });
    expect(left).toEqual({
      readBytes: COMMIT_PAGE_BUDGET.readBytes - 10,
      lines: COMMIT_PAGE_BUDGET.lines - 2,
      bytes: COMMIT_PAGE_BUDGET.bytes - 30,
      cells: COMMIT_PAGE_BUDGET.cells - 4,
    });
  });
});
