// /p/{id}/f/{path}: a text file with line numbers, PAGE_BYTES a page by byte offset (?from=N, so
// its last line is one link away however long it is); a binary file: its size and a download
// (?download=1, as an attachment, never sniffed); a text file's raw bytes (?raw=1, text/plain); the
// file as an earlier version left it (?at=V); its history (file-history.ts).

import type { ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import type { ProjectAccess } from "../../access.js";
import { HttpError } from "../../http.js";
import { checkIdentifier } from "../../identifiers.js";
import type { StoredBytes } from "../../store.js";
import { lineNumberAt, looksLikeText, readBytes, readPage } from "../byte-pages.js";
import type { Visit, WebContext } from "../context.js";
import { html, webPath, withQuery } from "../html.js";
import { timeTag } from "../when.js";
import { historyHtml, pathHistory } from "./file-history.js";
import { formatSize, page, SECURITY_HEADERS, sendPage } from "../layout.js";
import { intParam, pager, projectCrumbs } from "./project-nav.js";

export const PAGE_BYTES = 256 * 1024;
/** How much of a file's head decides text or binary. */
const SNIFF_BYTES = 8192;

export async function filePage(visit: Visit, ctx: WebContext, project: ProjectAccess, path: string): Promise<void> {
  const { projectId } = project;
  checkIdentifier("path", path);
  const index = await ctx.indexes.current(project);
  const at = intParam(visit.url, "at", 0);
  // ?at=V: the file as version V left it (a commit page's and a session's links); else as it is now.
  const row = at > 0 && at < index.version ? (await project.files(at))?.files.find((f) => f.path === path) : index.files.get(path);
  const blob = row && (await project.readBlob(row.sha256));
  if (!row || !blob)
    throw new HttpError(
      404,
      "not_found",
      `no file ${JSON.stringify(path)} in ${projectId}${at > 0 && at < index.version ? ` at v${at}` : ""}`,
    );
  const name = path.slice(path.lastIndexOf("/") + 1);
  const text = looksLikeText(await readBytes(blob, 0, SNIFF_BYTES));
  if (visit.url.searchParams.get("download") === "1") return download(visit.res, blob, name, "attachment");
  if (visit.url.searchParams.get("raw") === "1" && text) return download(visit.res, blob, name, "inline");
  const latest = webPath("p", projectId, "f", ...path.split("/"));
  const href = at > 0 && at < index.version ? withQuery(latest, { at }) : latest;
  const when =
    "version" in row
      ? html`last changed in <a href="${webPath("p", projectId, "commits", String(row.version))}">v${row.version}</a> ${timeTag(row.time)}`
      : html`as of <a href="${webPath("p", projectId, "commits", String(at))}">v${at}</a> · <a href="${latest}">the latest</a>`;
  const about = html`<p class="byline">${formatSize(row.size)} · ${when} · ${text ? html`<a href="${withQuery(href, { raw: 1 })}">raw</a> · ` : ""}<a href="${withQuery(href, { download: 1 })}">download</a> · <a href="#history">history</a></p>`;
  const body = text ? await textView(visit.url, blob, href) : html`<p>A binary file of ${formatSize(row.size)}.</p>`;
  const crumbs = projectCrumbs(
    projectId,
    ...path.split("/").map((part, i, all) => {
      const sub = all.slice(0, i + 1).join("/");
      return [part, i === all.length - 1 ? href : withQuery(webPath("p", projectId), { dir: sub })] as const;
    }),
  );
  const history = historyHtml(
    projectId,
    path,
    await pathHistory(project, ctx.maxFeedBytes, path, index.version),
    at || index.files.get(path)?.version || 0,
  );
  sendPage(visit.res, 200, page({ title: path, session: visit.session, crumbs, body: html`${about}${body}${history}` }));
}

async function textView(url: URL, blob: StoredBytes, href: string) {
  const from = intParam(url, "from", 0);
  // A next page's link carries its first line's number and starts exactly where the last one ended;
  // any other offset is moved to a line start, and its line counted.
  const given = intParam(url, "line", 0);
  const { start, bytes, next } = await readPage(blob, from, PAGE_BYTES, given === 0);
  const firstLine = start === 0 ? 1 : given || (await lineNumberAt(blob, start));
  const lines = bytes.toString("utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  // A line cut at the page's end goes on, with its number, on the next page.
  const nextLine = firstLine + lines.length - (bytes.at(-1) === 10 ? 0 : 1);
  const nextHref = next !== undefined ? withQuery(href, { from: next, line: nextLine }) : undefined;
  const lastStart = Math.max(0, blob.size - PAGE_BYTES);
  const body = html`<pre class="lines"><code>${lines.map((line, i) => html`<span class="n">${firstLine + i}</span>${line}\n`)}</code></pre>`;
  return html`${pager([
    ["first", start > 0 ? href : undefined],
    ["next →", nextHref],
    ["last", next !== undefined ? withQuery(href, { from: lastStart }) : undefined],
  ])}${body}${pager([["next →", nextHref]])}`;
}

/** The file's bytes: as an attachment (any file), or inline as plain text (a text file's raw view, never sniffed as HTML). */
async function download(res: ServerResponse, blob: StoredBytes, name: string, disposition: "attachment" | "inline"): Promise<void> {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "content-type": disposition === "inline" ? "text/plain; charset=utf-8" : "application/octet-stream",
    "content-length": String(blob.size),
    "content-disposition": `${disposition}; filename*=UTF-8''${rfc5987(name)}`,
  });
  // A browser that stops the download is not a server error.
  await pipeline(blob.chunks(), res).catch(() => res.destroy());
}

/** A file name as an RFC 5987 value: percent-encoded, the few characters encodeURIComponent leaves but the RFC does not allow included. */
function rfc5987(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
