// Lines added and removed by a change (+n −m). The commit page counts the diff it shows; the commit
// list counts only where it is cheap: small text files, within a small budget a page.

import { diffLines } from "../../text/unified-diff.js";
import type { StoredBytes } from "../store.js";
import { looksLikeText, readBytes } from "./byte-pages.js";
import { html, type Html } from "./html.js";

/** The project's blobs, as a page may read them. */
export type ReadBlob = (sha256: string) => Promise<StoredBytes | undefined>;

export interface LineCounts {
  added: number;
  removed: number;
}

/** The counts of a unified diff's lines (its two file lines and hunk headers are not counted). */
export function countDiffLines(lines: readonly string[]): LineCounts {
  const counts = { added: 0, removed: 0 };
  lines.forEach((line, i) => {
    if (i < 2 || line.startsWith("@@")) return;
    if (line.startsWith("+")) counts.added++;
    else if (line.startsWith("-")) counts.removed++;
  });
  return counts;
}

/** What the commit list may spend on counts: bytes of blobs read and LCS cells filled, a page. */
export interface CountBudget {
  readBytes: number;
  cells: number;
}

export const LIST_COUNT_BUDGET: Readonly<CountBudget> = { readBytes: 1024 * 1024, cells: 2_000_000 };
/** A side larger than this is not counted on the list. */
export const LIST_COUNT_MAX_SIDE = 32 * 1024;

/** The counts of a change between two blobs (undefined hash: no side), or undefined past the budget, binary or missing. */
export async function cheapCounts(
  readBlob: ReadBlob,
  oldHash: string | undefined,
  newHash: string | undefined,
  left: CountBudget,
): Promise<LineCounts | undefined> {
  const sides = await Promise.all([oldHash, newHash].map((hash) => (hash === undefined ? undefined : readBlob(hash))));
  if (sides.some((side, i) => side === undefined && [oldHash, newHash][i] !== undefined)) return undefined;
  const sizes = sides.map((side) => side?.size ?? 0);
  if (sizes.some((size) => size > LIST_COUNT_MAX_SIDE) || sizes[0]! + sizes[1]! > left.readBytes || left.cells <= 0) return undefined;
  const bytes = await Promise.all(sides.map((side) => (side ? readBytes(side, 0, side.size) : Buffer.alloc(0))));
  left.readBytes -= bytes[0]!.length + bytes[1]!.length;
  if (!bytes.every(looksLikeText)) return undefined;
  const diff = diffLines(bytes[0]!.toString("utf8"), bytes[1]!.toString("utf8"), "a", "b", { maxCells: left.cells });
  left.cells -= diff.cells;
  return countDiffLines(diff.lines);
}

/** "+3 −1" (nothing when not known). */
export function countsHtml(counts: LineCounts | undefined): Html | "" {
  if (!counts) return "";
  return html`<span class="counts"><span class="added">+${counts.added}</span> <span class="removed">−${counts.removed}</span></span>`;
}
