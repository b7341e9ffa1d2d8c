// What one page of the web view may cost the server (issue 44: one 1 MiB blob under 50 paths made
// a commit page cost 2 GiB and 25 s): bytes of blobs read, and lines and bytes of diff shown. Pure:
// the page asks before each piece of work and says what it spent.

export interface Budget {
  /** Bytes of blobs read to make diffs. */
  readBytes: number;
  /** Lines of diff shown. */
  lines: number;
  /** Bytes of diff text shown (before HTML escaping). */
  bytes: number;
  /** Cells of LCS tables filled (src/text/unified-diff.ts); past them a change is shown replaced whole. */
  cells: number;
}

/** A commit page in all: about 1 MiB of diff, whatever the commit. */
export const COMMIT_PAGE_BUDGET: Readonly<Budget> = { readBytes: 8 * 1024 * 1024, lines: 5000, bytes: 1024 * 1024, cells: 4_000_000 };
/** One file's diff at most: a larger one is cut, with a link to the file. */
export const FILE_DIFF_BUDGET: Readonly<Budget> = { readBytes: 512 * 1024, lines: 1000, bytes: 128 * 1024, cells: 1_000_000 };
/** A changed file (both sides) larger than this on either side is not diffed, only its sizes said. */
export const MAX_DIFF_SIDE_BYTES = 256 * 1024;

/** How one change is shown, from its sides' sizes (undefined: no such side) and what the page has left. */
export type DiffPlan =
  | { kind: "diff" }
  /** An added or deleted file: its first `readBytes` as all + or all - lines. */
  | { kind: "head"; readBytes: number }
  | { kind: "summary"; reason: "large" | "budget" };

export function planDiff(oldSize: number | undefined, newSize: number | undefined, left: Budget): DiffPlan {
  if (left.lines <= 0 || left.bytes <= 0 || left.readBytes <= 0) return { kind: "summary", reason: "budget" };
  if (oldSize === undefined || newSize === undefined) {
    return {
      kind: "head",
      readBytes: Math.min(oldSize ?? newSize ?? 0, FILE_DIFF_BUDGET.readBytes, FILE_DIFF_BUDGET.bytes, left.readBytes, left.bytes),
    };
  }
  if (oldSize > MAX_DIFF_SIDE_BYTES || newSize > MAX_DIFF_SIDE_BYTES) return { kind: "summary", reason: "large" };
  if (oldSize + newSize > left.readBytes) return { kind: "summary", reason: "budget" };
  return { kind: "diff" };
}

/** The most one file's diff may show and fill now: its own cap, or what the page has left. */
export function fileShare(left: Budget): { lines: number; bytes: number; cells: number } {
  const least = (name: "lines" | "bytes" | "cells") => Math.max(0, Math.min(FILE_DIFF_BUDGET[name], left[name]));
  return { lines: least("lines"), bytes: least("bytes"), cells: least("cells") };
}

/** `lines` kept while their bytes (each with its newline) fit in `maxBytes`; a first line longer than that is cut to fit. */
export function linesWithin(lines: readonly string[], maxBytes: number): { lines: string[]; bytes: number; cut: boolean } {
  const kept: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > maxBytes) {
      // A line alone past the cap (a minified file): its start, so that the diff shows something.
      if (kept.length === 0) kept.push(line.slice(0, maxBytes));
      return { lines: kept, bytes: Math.min(maxBytes, bytes + size), cut: true };
    }
    kept.push(line);
    bytes += size;
  }
  return { lines: kept, bytes, cut: false };
}

export function spend(left: Budget, spent: Partial<Budget>): void {
  left.readBytes -= spent.readBytes ?? 0;
  left.lines -= spent.lines ?? 0;
  left.bytes -= spent.bytes ?? 0;
  left.cells -= spent.cells ?? 0;
}
