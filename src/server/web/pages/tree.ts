// /p/{id}: the file tree, one directory at a time (?dir=a/b), PAGE_ENTRIES entries a page
// (?page=N): sizes and last change. Lives: a new commit shows without a reload.

import type { ProjectAccess } from "../../access.js";
import { HttpError } from "../../http.js";
import { checkIdentifier } from "../../identifiers.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath, withQuery } from "../html.js";
import { formatSize, page, sendPage } from "../layout.js";
import { timeTag } from "../when.js";
import type { DirEntry } from "../project-index.js";
import { intParam, liveUrl, pager, projectCrumbs, projectTabs } from "./project-nav.js";

export const PAGE_ENTRIES = 200;

export async function treePage(visit: Visit, ctx: WebContext, project: ProjectAccess): Promise<void> {
  const { projectId } = project;
  const dir = (visit.url.searchParams.get("dir") ?? "").replace(/^\/+|\/+$/g, "");
  if (dir !== "") checkIdentifier("path", dir, "dir");
  const index = await ctx.indexes.current(project);
  const entries = index.list(dir);
  if (!entries) throw new HttpError(404, "not_found", `no directory ${JSON.stringify(dir)} in ${projectId}`);
  const pages = Math.max(1, Math.ceil(entries.length / PAGE_ENTRIES));
  const pageNo = Math.min(intParam(visit.url, "page", 1) || 1, pages);
  const shown = entries.slice((pageNo - 1) * PAGE_ENTRIES, pageNo * PAGE_ENTRIES);
  const here = (n: number) => withQuery(webPath("p", projectId), { dir: dir || undefined, page: n > 1 ? n : undefined });
  const body = html`${projectTabs(projectId)}
<p class="muted">Version ${index.version} · ${entries.length} entries${pages > 1 ? html` · page ${pageNo} of ${pages}` : ""}</p>
${
  entries.length === 0
    ? html`<p class="muted">No files yet.</p>`
    : html`<table>
<thead><tr><th>Name</th><th class="num">Size</th><th>Last change</th></tr></thead>
<tbody>${dir ? html`<tr><td><a href="${parentHref(projectId, dir)}">..</a></td><td></td><td></td></tr>` : ""}${shown.map((e) => entryRow(projectId, e))}</tbody>
</table>`
}
${pager([
  ["← previous", pageNo > 1 ? here(pageNo - 1) : undefined],
  ["next →", pageNo < pages ? here(pageNo + 1) : undefined],
  ["last", pageNo < pages ? here(pages) : undefined],
])}`;
  const crumbs = dirCrumbs(projectId, dir);
  sendPage(
    visit.res,
    200,
    page({ title: dir ? `${projectId}/${dir}` : projectId, session: visit.session, crumbs, live: liveUrl(projectId, index.version), body }),
  );
}

function entryRow(projectId: string, entry: DirEntry) {
  const href =
    entry.kind === "dir" ? withQuery(webPath("p", projectId), { dir: entry.path }) : webPath("p", projectId, "f", ...entry.path.split("/"));
  const what =
    entry.kind === "dir"
      ? html`<td class="num" title="${entry.files} files">${formatSize(entry.size)}</td>`
      : html`<td class="num">${formatSize(entry.size)}</td>`;
  const change = html`<a href="${webPath("p", projectId, "commits", String(entry.version))}">v${entry.version}</a> ${timeTag(entry.time)}`;
  return html`<tr><td><a href="${href}">${entry.name}${entry.kind === "dir" ? "/" : ""}</a></td>${what}<td>${change}</td></tr>`;
}

function parentHref(projectId: string, dir: string): string {
  const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : undefined;
  return withQuery(webPath("p", projectId), { dir: parent });
}

function dirCrumbs(projectId: string, dir: string) {
  const parts = dir ? dir.split("/") : [];
  return projectCrumbs(
    projectId,
    ...parts.map((name, i) => [name, withQuery(webPath("p", projectId), { dir: parts.slice(0, i + 1).join("/") })] as const),
  );
}
