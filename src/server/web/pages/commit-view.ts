// The parts of a commit page, as a code host shows one: who made it (machine, agent, session) and
// when, its file list (status, path, +/−), then a card per file with links to the file at this
// commit and to its history, the diff folded when long.

import type { CommitRecord } from "../../../api/types.js";
import { STATUS_WORDS } from "../change-status.js";
import { html, webPath, withQuery, type Html } from "../html.js";
import { countsHtml } from "../line-counts.js";
import { timeTag } from "../when.js";
import { filePath, statusBadge, type FileDiff } from "./change-diff.js";

/** The commit's line under its title: when, from which machine and agent, in which session, how many changes. */
export function commitByline(projectId: string, commit: CommitRecord): Html {
  const { host, agent, sessionId } = commit.source ?? {};
  const count = commit.changes.length;
  return html`<p class="byline">${timeTag(commit.time)}${host ? html` · on <strong class="host">${host}</strong>` : ""}${agent ? html` · by <strong>${agent}</strong>` : ""}${
    sessionId ? html` · session <a href="${webPath("p", projectId, "sessions", sessionId)}">${sessionId}</a>` : ""
  } · ${count} file${count === 1 ? "" : "s"} changed</p>`;
}

/** The anchor of the card of the page's `i`th change. */
const cardId = (i: number) => `file-${i + 1}`;

export function fileList(diffs: readonly FileDiff[]): Html {
  const rows = diffs.map(
    (d, i) =>
      html`<tr><td>${statusBadge(d.status)}</td><td><a href="#${cardId(i)}"><code>${d.change.path}</code></a></td><td class="num">${countsHtml(d.counts)}</td></tr>`,
  );
  return html`<table class="filelist"><thead><tr><th><span class="sr">Status</span></th><th>File</th><th class="num">Lines</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A change's card: its header (status, path, counts, links) and its diff, folded when long. */
export function fileCard(projectId: string, version: number, d: FileDiff, i: number): Html {
  const path = d.change.path;
  const history = withQuery(filePath(projectId, path), { at: version });
  const links = html`<span class="links">${
    d.status === "D"
      ? html`<a href="${withQuery(filePath(projectId, path), { at: version - 1 })}">file before</a>`
      : html`<a href="${withQuery(filePath(projectId, path), { at: version })}">view file</a>`
  } · <a href="${history}#history">history</a></span>`;
  return html`<section class="card" id="${cardId(i)}"><details${d.folded ? "" : html` open`}>
<summary>${statusBadge(d.status)} <code class="path">${path}</code> ${countsHtml(d.counts)} <span class="muted">${STATUS_WORDS[d.status]}${d.folded ? ", folded: open to show" : ""}</span>${links}</summary>
${d.body}
</details></section>`;
}
