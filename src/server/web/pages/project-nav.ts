// The links shared by a project's pages: breadcrumbs to the project and its sections, and pagers.

import { html, webPath, withQuery, type Html } from "../html.js";

export function projectCrumbs(projectId: string, ...more: (readonly [string, string])[]): (readonly [string, string])[] {
  return [[projectId, webPath("p", projectId)], ...more];
}

export function projectTabs(projectId: string): Html {
  return html`<p><a href="${webPath("p", projectId)}">Files</a> · <a href="${webPath("p", projectId, "commits")}">Commits</a> · <a href="${webPath("p", projectId, "sessions")}">Sessions</a></p>`;
}

/** The live route of a project's pages: answers once the head is past `version` (or a session's transcript past `length`). */
export function liveUrl(projectId: string, version: number, session?: { id: string; length: number }): string {
  return withQuery(webPath("p", projectId, "live"), { since: version, session: session?.id, length: session?.length });
}

/** Links to other pages; an undefined href is left out. */
export function pager(links: readonly (readonly [string, string | undefined])[]): Html {
  const shown = links.filter((link): link is readonly [string, string] => link[1] !== undefined);
  return html`<nav class="pager" aria-label="pages">${shown.map(([label, href]) => html`<a href="${href}">${label}</a>`)}</nav>`;
}

/** A non-negative integer query parameter, or `fallback`. */
export function intParam(url: URL, name: string, fallback: number): number {
  const value = url.searchParams.get(name);
  return value !== null && /^\d{1,15}$/.test(value) ? Number(value) : fallback;
}
