// The changes of one commit as the commit page shows them: each a unified diff with literal -/+
// lines within the page's budget (page-budget.ts), made one at a time; a file too large, or past
// what the page may still show, is said with its sizes and a link to the file.

import type { Change } from "../../../api/types.js";
import { diffLines } from "../../../text/unified-diff.js";
import type { StoredBytes } from "../../store.js";
import { looksLikeText, readBytes } from "../byte-pages.js";
import { html, webPath, type Html } from "../html.js";
import { formatSize } from "../layout.js";
import { changeStatus, STATUS_WORDS, type ChangeStatus } from "../change-status.js";
import { countDiffLines, type LineCounts, type ReadBlob } from "../line-counts.js";
import { COMMIT_PAGE_BUDGET, fileShare, linesWithin, planDiff, spend, type Budget } from "../page-budget.js";

/** One change as the commit page shows it: its file list's row and its card. */
export interface FileDiff {
  change: Change;
  status: ChangeStatus;
  /** Lines added and removed, when the whole diff was made. */
  counts: LineCounts | undefined;
  /** The card's content below its header: the diff, or why there is none. */
  body: Html;
  /** Whether the card starts folded (a long diff, or a deleted file). */
  folded: boolean;
}

/** Each change's diff within the page's budget, in order; their file list comes before them, so they are all made first. */
export async function changeDiffs(
  readBlob: ReadBlob,
  projectId: string,
  changes: readonly Change[],
  oldHashes: ReadonlyMap<string, string>,
): Promise<FileDiff[]> {
  const left: Budget = { ...COMMIT_PAGE_BUDGET };
  const diffs: FileDiff[] = [];
  for (const change of changes) {
    const oldHash = oldHashes.get(change.path);
    const newHash = change.op === "put" ? change.sha256 : undefined;
    const status = changeStatus(change, oldHash !== undefined);
    const shown = await changeDiff(readBlob, projectId, change, oldHash, newHash, left);
    diffs.push({ change, status, ...shown, folded: status === "D" || (shown.lines ?? 0) > FOLD_LINES });
  }
  return diffs;
}

/** A diff longer than this starts folded (a <details> opened with a click). */
export const FOLD_LINES = 400;

interface Shown {
  body: Html;
  counts: LineCounts | undefined;
  lines?: number;
}

async function changeDiff(
  readBlob: ReadBlob,
  projectId: string,
  change: Change,
  oldHash: string | undefined,
  newHash: string | undefined,
  left: Budget,
): Promise<Shown> {
  const href = change.op === "put" ? filePath(projectId, change.path) : undefined;
  const said = (body: Html): Shown => ({ body, counts: undefined });
  const [before, after] = await Promise.all([sideOf(readBlob, oldHash), sideOf(readBlob, newHash)]);
  if (before === null || after === null) return said(html`<p class="muted">Not shown: its content is missing from the store.</p>`);
  const plan = planDiff(before?.size, after?.size, left);
  const sizes = `${before ? formatSize(before.size) : "added"} → ${after ? formatSize(after.size) : "deleted"}`;
  if (plan.kind === "summary") {
    const why = plan.reason === "large" ? "too large to diff here" : "not shown: this page has shown as much diff as it may";
    return said(html`<p class="muted">${sizes}, ${why}${href ? html`: <a href="${href}">open the file</a>` : ""}.</p>`);
  }
  const [oldBytes, newBytes] = await Promise.all([sideBytes(before, plan), sideBytes(after, plan)]);
  spend(left, { readBytes: oldBytes.length + newBytes.length });
  if (!looksLikeText(oldBytes) || !looksLikeText(newBytes))
    return said(html`<p class="muted">Binary file, not shown as a diff (${sizes}).</p>`);
  const partial = plan.kind === "head" && oldBytes.length + newBytes.length < (before ?? after)!.size;
  const share = fileShare(left);
  const names = [before ? `a/${change.path}` : "/dev/null", after ? `b/${change.path}` : "/dev/null"] as const;
  const diff = diffLines(textOf(oldBytes, partial), textOf(newBytes, partial), ...names, { maxLines: share.lines, maxCells: share.cells });
  if (diff.lines.length === 0) return { body: html`<p class="muted">No change in content.</p>`, counts: { added: 0, removed: 0 } };
  const shown = linesWithin(diff.lines, share.bytes);
  spend(left, { lines: shown.lines.length, bytes: shown.bytes, cells: diff.cells });
  const cut = partial || diff.cut || shown.cut;
  const more = cut
    ? html`<p class="muted">Diff cut at ${shown.lines.length} lines (${sizes})${href ? html`: <a href="${href}">the whole file</a>` : ""}.</p>`
    : "";
  return { body: html`${diffHtml(shown.lines)}${more}`, counts: cut ? undefined : countDiffLines(shown.lines), lines: shown.lines.length };
}

/** The file page of a path. */
export function filePath(projectId: string, path: string): string {
  return webPath("p", projectId, "f", ...path.split("/"));
}

/** A status as a letter in a badge, its word on hover. */
export function statusBadge(status: ChangeStatus): Html {
  return html`<span class="status s${status}" title="${STATUS_WORDS[status]}">${status}</span>`;
}

/** A side of the change: undefined when there is none (added, deleted), null when its blob is missing. */
async function sideOf(readBlob: ReadBlob, hash: string | undefined): Promise<StoredBytes | undefined | null> {
  if (hash === undefined) return undefined;
  return (await readBlob(hash)) ?? null;
}

/** The bytes the plan reads of a side: all of it for a diff, the head of an added or deleted file. */
function sideBytes(side: StoredBytes | undefined, plan: { kind: "diff" } | { kind: "head"; readBytes: number }): Promise<Buffer> {
  if (!side) return Promise.resolve(Buffer.alloc(0));
  return readBytes(side, 0, plan.kind === "head" ? plan.readBytes : side.size);
}

/** The text of read bytes; a head read short of the file ends at its last whole line (or its one cut line). */
function textOf(bytes: Buffer, partial: boolean): string {
  if (!partial) return bytes.toString("utf8");
  const end = bytes.lastIndexOf(10);
  return end < 0 ? `${bytes.toString("utf8")}\n` : bytes.subarray(0, end + 1).toString("utf8");
}

/** The diff's lines, each with its old and new line number (from the hunk headers); its two file lines left out, the card names the file. */
function diffHtml(lines: readonly string[]): Html {
  const at = { old: 0, new: 0 };
  const spans = lines
    .slice(2)
    .flatMap((line) => line.split("\n"))
    .map((line) => {
      const kind = lineClass(line);
      const hunk = kind === "hunk" ? /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line) : null;
      if (hunk) [at.old, at.new] = [Number(hunk[1]), Number(hunk[2])];
      const old = kind === "same" || kind === "del" ? at.old++ : "";
      const now = kind === "same" || kind === "add" ? at.new++ : "";
      return html`<span class="${kind}"><span class="ln" data-old="${old}" data-new="${now}"></span>${line}\n</span>`;
    });
  return html`<pre class="diff"><code>${spans}</code></pre>`;
}

function lineClass(line: string): string {
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("\\")) return "note";
  return "same";
}
