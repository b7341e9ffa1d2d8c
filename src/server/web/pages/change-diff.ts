// The changes of one commit as the commit page shows them: each a unified diff with literal -/+
// lines within the page's budget (page-budget.ts), made one at a time; a file too large, or past
// what the page may still show, is said with its sizes and a link to the file.

import type { Change } from "../../../api/types.js";
import { diffLines } from "../../../text/unified-diff.js";
import type { StoredBytes } from "../../store.js";
import { looksLikeText, readBytes } from "../byte-pages.js";
import { html, webPath, type Html } from "../html.js";
import { formatSize } from "../layout.js";
import { COMMIT_PAGE_BUDGET, fileShare, linesWithin, planDiff, spend, type Budget } from "../page-budget.js";

/** The project's blobs, as the page may read them. */
export type ReadBlob = (sha256: string) => Promise<StoredBytes | undefined>;

/** Each change's part of the page, made when asked for: the page holds one at a time. */
export async function* changeDiffs(readBlob: ReadBlob, projectId: string, changes: readonly Change[], oldHashes: ReadonlyMap<string, string>): AsyncGenerator<Html> {
  const left: Budget = { ...COMMIT_PAGE_BUDGET };
  for (const change of changes) {
    const newHash = change.op === "put" ? change.sha256 : undefined;
    yield await changeDiff(readBlob, projectId, change, oldHashes.get(change.path), newHash, left);
  }
}

async function changeDiff(readBlob: ReadBlob, projectId: string, change: Change, oldHash: string | undefined, newHash: string | undefined, left: Budget): Promise<Html> {
  const href = change.op === "put" ? webPath("p", projectId, "f", ...change.path.split("/")) : undefined;
  const heading = html`<h2><code>${href ? html`<a href="${href}">${change.path}</a>` : change.path}</code></h2>`;
  const [before, after] = await Promise.all([sideOf(readBlob, oldHash), sideOf(readBlob, newHash)]);
  if (before === null || after === null) return html`${heading}<p class="muted">Not shown: its content is missing from the store.</p>`;
  const plan = planDiff(before?.size, after?.size, left);
  const sizes = `${before ? formatSize(before.size) : "added"} → ${after ? formatSize(after.size) : "deleted"}`;
  if (plan.kind === "summary") {
    const why = plan.reason === "large" ? "too large to diff here" : "not shown: this page has shown as much diff as it may";
    return html`${heading}<p class="muted">${sizes}, ${why}${href ? html`: <a href="${href}">open the file</a>` : ""}.</p>`;
  }
  const [oldBytes, newBytes] = await Promise.all([sideBytes(before, plan), sideBytes(after, plan)]);
  spend(left, { readBytes: oldBytes.length + newBytes.length });
  if (!looksLikeText(oldBytes) || !looksLikeText(newBytes)) return html`${heading}<p class="muted">Binary file, not shown as a diff (${sizes}).</p>`;
  const partial = plan.kind === "head" && oldBytes.length + newBytes.length < (before ?? after)!.size;
  const share = fileShare(left);
  const names = [before ? `a/${change.path}` : "/dev/null", after ? `b/${change.path}` : "/dev/null"] as const;
  const diff = diffLines(textOf(oldBytes, partial), textOf(newBytes, partial), ...names, { maxLines: share.lines, maxCells: share.cells });
  if (diff.lines.length === 0) return html`${heading}<p class="muted">No change in content.</p>`;
  const shown = linesWithin(diff.lines, share.bytes);
  spend(left, { lines: shown.lines.length, bytes: shown.bytes, cells: diff.cells });
  const cut = partial || diff.cut || shown.cut;
  const more = cut ? html`<p class="muted">Diff cut at ${shown.lines.length} lines (${sizes})${href ? html`: <a href="${href}">the whole file</a>` : ""}.</p>` : "";
  return html`${heading}${diffHtml(shown.lines)}${more}`;
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

function diffHtml(lines: readonly string[]): Html {
  const spans = lines.flatMap((line) => line.split("\n")).map((line) => html`<span class="${lineClass(line)}">${line}\n</span>`);
  return html`<pre class="diff"><code>${spans}</code></pre>`;
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "same";
}
