// A file's history on its page: the commits that touched its path, newest first, each with its
// status (added, modified, deleted), machine, agent and time.

import type { CommitRecord } from "../../../api/types.js";
import type { ProjectAccess } from "../../access.js";
import { changeStatus } from "../change-status.js";
import { html, webPath, type Html } from "../html.js";
import { timeTag } from "../when.js";
import { statusBadge } from "./change-diff.js";

/** Commits a file page lists: its latest ones (older ones are a commit page away, each links its previous). */
export const HISTORY_SHOWN = 50;
const HISTORY_READ = 500;
/** The versions a file page searches, back from the head: a page costs a bounded read of the log, however long. */
export const HISTORY_WINDOW = 5000;

export interface PathHistory {
  /** Newest first. */
  commits: CommitRecord[];
  /** Whether they go back to the path's first commit. */
  complete: boolean;
}

/** The last HISTORY_SHOWN commits that touched `path` among the last HISTORY_WINDOW versions before `head` (read in bounded pieces, only these kept). */
export async function pathHistory(project: ProjectAccess, maxFeedBytes: number, path: string, head: number): Promise<PathHistory> {
  const kept: CommitRecord[] = [];
  const since = Math.max(0, head - HISTORY_WINDOW);
  let complete = since === 0;
  for (let after = since; after < head;) {
    const feed = await project.commits({ since: after, limit: HISTORY_READ, path, maxBytes: maxFeedBytes });
    if (feed.commits.length === 0) break;
    kept.push(...feed.commits);
    if (kept.length > HISTORY_SHOWN) ((complete = false), kept.splice(0, kept.length - HISTORY_SHOWN));
    after = feed.commits.at(-1)!.version;
  }
  return { commits: kept.reverse(), complete };
}

export function historyHtml(projectId: string, path: string, { commits, complete }: PathHistory, current: number): Html {
  const rows = commits.map((commit, i) => {
    const change = commit.changes.findLast((c) => c.path === path);
    // Newest first: the next row is the commit before; the oldest row's is known only when the history is complete.
    const previous = commits[i + 1]?.changes.findLast((c) => c.path === path);
    const known = previous !== undefined || complete;
    const status = change && known ? changeStatus(change, previous?.op === "put") : undefined;
    const here = commit.version === current;
    return html`<tr${here ? html` class="here"` : ""}><td>${status ? statusBadge(status) : ""}</td>
<td class="num"><a href="${webPath("p", projectId, "commits", String(commit.version))}">v${commit.version}</a></td>
<td>${commit.source?.host ?? ""}</td><td>${commit.source?.agent ?? ""}</td><td>${timeTag(commit.time)}</td></tr>`;
  });
  return html`<section id="history"><h2>History</h2>${
    commits.length === 0
      ? html`<p class="muted">No commits touched this path.</p>`
      : html`<table><thead><tr><th><span class="sr">Status</span></th><th class="num">Version</th><th>Machine</th><th>Agent</th><th>When</th></tr></thead><tbody>${rows}</tbody></table>${
          !complete
            ? html`<p class="muted">Its latest commits (at most ${HISTORY_SHOWN}, within the last ${HISTORY_WINDOW} versions): older ones are a commit page away, each links the one before.</p>`
            : ""
        }`
  }</section>`;
}
