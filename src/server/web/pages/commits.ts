// /p/{id}/commits: the history, newest first, PAGE_COMMITS a page (?before=V); new commits show
// on its first page without a reload. /p/{id}/commits/{version}: one commit's changes as unified
// diffs (change-diff.ts), streamed as they are made.

import type { CommitRecord } from "../../../api/types.js";
import type { ProjectAccess } from "../../access.js";
import { HttpError } from "../../http.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath, withQuery, type Html } from "../html.js";
import { formatTime, page, sendPage, streamPage } from "../layout.js";
import { changeDiffs } from "./change-diff.js";
import { intParam, liveUrl, pager, projectCrumbs, projectTabs } from "./project-nav.js";

export const PAGE_COMMITS = 50;
/** Diffs on one page of a commit (?page=N); what they may cost in all: page-budget.ts. */
export const DIFFS_PER_PAGE = 50;

export async function commitsPage(visit: Visit, ctx: WebContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const head = (await ctx.indexes.current(project)).version;
  const before = Math.min(intParam(visit.url, "before", head + 1) || head + 1, head + 1);
  const since = Math.max(0, before - 1 - PAGE_COMMITS);
  const commits = (await commitsBetween(ctx, project, since, before - 1)).reverse();
  const rows = commits.map((c) => html`<tr>
<td class="num"><a href="${webPath("p", projectId, "commits", String(c.version))}">v${c.version}</a></td>
<td>${formatTime(c.time)}</td>
<td>${c.source?.agent ?? ""}</td>
<td>${c.source?.sessionId ? html`<a href="${webPath("p", projectId, "sessions", c.source.sessionId)}">${c.source.sessionId}</a>` : ""}</td>
<td>${summary(c)}</td>
</tr>`);
  const body = html`${projectTabs(projectId)}
${commits.length === 0 ? html`<p class="muted">No commits yet.</p>` : html`<table>
<thead><tr><th class="num">Version</th><th>Time</th><th>Agent</th><th>Session</th><th>Changes</th></tr></thead>
<tbody>${rows}</tbody></table>`}
${pager([
  ["← newer", before <= head ? webPath("p", projectId, "commits") : undefined],
  ["older →", since > 0 ? withQuery(webPath("p", projectId, "commits"), { before: since + 1 }) : undefined],
])}`;
  // Only the newest page changes when a commit comes.
  const live = before > head ? liveUrl(projectId, head) : undefined;
  sendPage(visit.res, 200, page({ title: `Commits of ${projectId}`, session: visit.session, crumbs: projectCrumbs(projectId, ["commits", webPath("p", projectId, "commits")]), live, body }));
}

function summary(commit: CommitRecord): Html {
  const shown = commit.changes.slice(0, 3).map((c) => html`<code>${c.op === "delete" ? "-" : "+"}${c.path}</code> `);
  const more = commit.changes.length - shown.length;
  return html`${shown}${more > 0 ? html`<span class="muted">and ${more} more</span>` : ""}`;
}

/** The commits after `since` up to `last`, oldest first (several reads when the feed's byte limit cuts one short). */
async function commitsBetween(ctx: WebContext, project: ProjectAccess, since: number, last: number): Promise<CommitRecord[]> {
  const commits: CommitRecord[] = [];
  for (let after = since; after < last; ) {
    const feed = await project.commits({ since: after, limit: last - after, maxBytes: ctx.maxFeedBytes });
    if (feed.commits.length === 0) break;
    commits.push(...feed.commits);
    after = feed.commits.at(-1)!.version;
  }
  return commits;
}

export async function commitPage(visit: Visit, ctx: WebContext, project: ProjectAccess, version: number): Promise<void> {
  const { projectId } = project;
  const head = (await ctx.indexes.current(project)).version;
  const [commit] = version <= head ? await commitsBetween(ctx, project, version - 1, version) : [];
  if (!commit) throw new HttpError(404, "not_found", `${projectId} has no version ${version}`);
  const pages = Math.max(1, Math.ceil(commit.changes.length / DIFFS_PER_PAGE));
  const pageNo = Math.min(intParam(visit.url, "page", 1) || 1, pages);
  const changes = commit.changes.slice((pageNo - 1) * DIFFS_PER_PAGE, pageNo * DIFFS_PER_PAGE);
  const before = version > 1 ? (await project.files(version - 1))?.files : [];
  const oldHashes = new Map((before ?? []).map((file) => [file.path, file.sha256]));
  const here = (n: number) => withQuery(webPath("p", projectId, "commits", String(version)), { page: n });
  const session = commit.source?.sessionId;
  const intro = html`<p class="muted">${formatTime(commit.time)}${commit.source?.agent ? html` · ${commit.source.agent}` : ""}${session ? html` · session <a href="${webPath("p", projectId, "sessions", session)}">${session}</a>` : ""} · ${commit.changes.length} change${commit.changes.length === 1 ? "" : "s"}</p>
${pager([
  ["← previous commit", version > 1 ? webPath("p", projectId, "commits", String(version - 1)) : undefined],
  ["next commit →", version < head ? webPath("p", projectId, "commits", String(version + 1)) : undefined],
  ["previous changes", pageNo > 1 ? here(pageNo - 1) : undefined],
  ["more changes", pageNo < pages ? here(pageNo + 1) : undefined],
])}`;
  const crumbs = projectCrumbs(projectId, ["commits", webPath("p", projectId, "commits")], [`v${version}`, webPath("p", projectId, "commits", String(version))]);
  await streamPage(visit.req, visit.res, { title: `${projectId} v${version}`, session: visit.session, crumbs }, withFirst(intro, changeDiffs((sha256) => project.readBlob(sha256), projectId, changes, oldHashes)));
}

async function* withFirst<T>(first: T, rest: AsyncIterable<T>): AsyncGenerator<T> {
  yield first;
  yield* rest;
}
