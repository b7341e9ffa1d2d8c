// /p/{id}/commits: the history, newest first, PAGE_COMMITS a page (?before=V), each path added,
// modified or deleted; new commits show on its first page without a reload. /p/{id}/commits/{version}:
// one commit's file list, then its changes as unified diffs (change-diff.ts, commit-view.ts); its
// byline is sent at once, the rest once the page's diffs (within their budget) are made.

import type { CommitRecord } from "../../../api/types.js";
import type { ProjectAccess } from "../../access.js";
import { HttpError } from "../../http.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath, withQuery, type Html } from "../html.js";
import { page, sendPage, streamPage } from "../layout.js";
import { changeFacts, type ChangeFacts } from "../change-status.js";
import { cheapCounts, countsHtml, LIST_COUNT_BUDGET, type CountBudget } from "../line-counts.js";
import { timeTag } from "../when.js";
import { changeDiffs, statusBadge } from "./change-diff.js";
import type { ReadBlob } from "../line-counts.js";
import { commitByline, fileCard, fileList } from "./commit-view.js";
import { intParam, liveUrl, pager, projectCrumbs, projectTabs } from "./project-nav.js";

export const PAGE_COMMITS = 50;
/** Paths a commit shows on the list; its page has them all. */
const LISTED_PATHS = 3;
/** Diffs on one page of a commit (?page=N); what they may cost in all: page-budget.ts. */
export const DIFFS_PER_PAGE = 50;

export async function commitsPage(visit: Visit, ctx: WebContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const head = (await ctx.indexes.current(project)).version;
  const before = Math.min(intParam(visit.url, "before", head + 1) || head + 1, head + 1);
  const since = Math.max(0, before - 1 - PAGE_COMMITS);
  const commits = await commitsBetween(ctx, project, since, before - 1);
  const facts = changeFacts(await hashesAt(project, since, commits), commits).reverse();
  commits.reverse();
  const readBlob: ReadBlob = (sha256) => project.readBlob(sha256);
  const left = { ...LIST_COUNT_BUDGET };
  const rows: Html[] = [];
  for (const [i, c] of commits.entries()) rows.push(commitRow(projectId, c, await summary(readBlob, c, facts[i]!, left)));
  const body = html`${projectTabs(projectId)}
${
  commits.length === 0
    ? html`<p class="muted">No commits yet.</p>`
    : html`<table>
<thead><tr><th class="num">Version</th><th>Changes</th><th>Machine</th><th>Agent</th><th>Session</th><th>When</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
${pager([
  ["← newer", before <= head ? webPath("p", projectId, "commits") : undefined],
  ["older →", since > 0 ? withQuery(webPath("p", projectId, "commits"), { before: since + 1 }) : undefined],
])}`;
  // Only the newest page changes when a commit comes.
  const live = before > head ? liveUrl(projectId, head) : undefined;
  sendPage(
    visit.res,
    200,
    page({
      title: `Commits of ${projectId}`,
      session: visit.session,
      crumbs: projectCrumbs(projectId, ["commits", webPath("p", projectId, "commits")]),
      live,
      body,
    }),
  );
}

function commitRow(projectId: string, c: CommitRecord, changes: Html): Html {
  return html`<tr>
<td class="num"><a href="${webPath("p", projectId, "commits", String(c.version))}">v${c.version}</a></td>
<td>${changes}</td>
<td>${c.source?.host ?? ""}</td>
<td>${c.source?.agent ?? ""}</td>
<td>${c.source?.sessionId ? html`<a href="${webPath("p", projectId, "sessions", c.source.sessionId)}" title="${c.source.sessionId}">${shortId(c.source.sessionId)}</a>` : ""}</td>
<td>${timeTag(c.time)}</td>
</tr>`;
}

/** A long session id (a UUID) as its first characters, as a code host shows a commit hash; the whole one on hover. */
function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** A commit's first paths, each with its status and (where cheap) its line counts. */
async function summary(readBlob: ReadBlob, commit: CommitRecord, facts: readonly ChangeFacts[], left: CountBudget): Promise<Html> {
  const shown: Html[] = [];
  for (const [i, change] of commit.changes.slice(0, LISTED_PATHS).entries()) {
    const { status, oldHash } = facts[i]!;
    const counts = await cheapCounts(readBlob, oldHash, change.op === "put" ? change.sha256 : undefined, left);
    shown.push(html`<li>${statusBadge(status)} <code>${change.path}</code> ${countsHtml(counts)}</li>`);
  }
  const more = commit.changes.length - shown.length;
  return html`<ul class="changes">${shown}${more > 0 ? html`<li class="muted">and ${more} more</li>` : ""}</ul>`;
}

/** The hashes, before version `since + 1`, of the paths the commits touch (the rest is not needed). */
async function hashesAt(project: ProjectAccess, since: number, commits: readonly CommitRecord[]): Promise<Map<string, string>> {
  if (since === 0 || commits.length === 0) return new Map();
  const touched = new Set(commits.flatMap((c) => c.changes.map((change) => change.path)));
  const files = (await project.files(since))?.files ?? [];
  return new Map(files.filter((file) => touched.has(file.path)).map((file) => [file.path, file.sha256]));
}

/** The commits after `since` up to `last`, oldest first (several reads when the feed's byte limit cuts one short). */
async function commitsBetween(ctx: WebContext, project: ProjectAccess, since: number, last: number): Promise<CommitRecord[]> {
  const commits: CommitRecord[] = [];
  for (let after = since; after < last;) {
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
  const intro = html`${commitByline(projectId, commit)}
${pager([
  ["← previous commit", version > 1 ? webPath("p", projectId, "commits", String(version - 1)) : undefined],
  ["next commit →", version < head ? webPath("p", projectId, "commits", String(version + 1)) : undefined],
  ["previous changes", pageNo > 1 ? here(pageNo - 1) : undefined],
  ["more changes", pageNo < pages ? here(pageNo + 1) : undefined],
])}`;
  const crumbs = projectCrumbs(
    projectId,
    ["commits", webPath("p", projectId, "commits")],
    [`v${version}`, webPath("p", projectId, "commits", String(version))],
  );
  const readBlob: ReadBlob = (sha256) => project.readBlob(sha256);
  await streamPage(
    visit.req,
    visit.res,
    { title: `${projectId} v${version}`, session: visit.session, crumbs },
    commitParts(
      intro,
      () => changeDiffs(readBlob, projectId, changes, oldHashes),
      (diffs) => [fileList(diffs), ...diffs.map((d, i) => fileCard(projectId, version, d, i))],
    ),
  );
}

/** The intro at once (the diffs take a while), then what the diffs make, part by part. */
async function* commitParts<T>(intro: Html, make: () => Promise<T>, parts: (made: T) => Html[]): AsyncGenerator<Html> {
  yield intro;
  // Each part is let go once written.
  const list = parts(await make());
  while (list.length > 0) yield list.shift()!;
}
