// The frame of every page and the headers of every web answer (docs/web-view.md#how-it-is-kept-safe): a strict CSP
// (scripts and styles only from /assets/ of this server), no sniffing, no framing, no caching.

import type { ServerResponse } from "node:http";
import { html, renderHtml, type Fragment, type Html } from "./html.js";
import type { WebSession } from "./web-sessions.js";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export interface PageParts {
  title: string;
  /** The signed-in session (its CSRF token goes into the sign-out form); none on the login page. */
  session?: WebSession;
  /** Breadcrumbs: [label, href] pairs, the last one the page itself. */
  crumbs?: readonly (readonly [string, string])[];
  /** A web route answering once something new is there (the page's live script waits on it). */
  live?: string;
  body: Fragment;
}

export function page(parts: PageParts): Html {
  const { title, session, crumbs = [], live, body } = parts;
  // The script's end tag is spelled `</${"script"}>`: a literal "</script" in a tagged template makes
  // the bundler (scripts/bundle.mjs) rewrite the template through a runtime helper it cannot find.
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · uspark</title>
<link rel="stylesheet" href="/assets/web.css">
<script src="/assets/live.js" defer></${"script"}>
</head>
<body${live ? html` data-live="${live}"` : ""}>
<header>
<nav aria-label="breadcrumbs"><a href="/">uspark</a>${crumbs.map(([label, href]) => html` / <a href="${href}">${label}</a>`)}</nav>
${session?.token !== undefined ? signOutForm(session) : ""}
</header>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

function signOutForm(session: WebSession): Html {
  return html`<form method="post" action="/logout" class="signout">${csrfField(session)}<button type="submit">Sign out</button></form>`;
}

export function csrfField(session: WebSession): Html {
  return html`<input type="hidden" name="csrf" value="${session.csrf}">`;
}

export function sendPage(res: ServerResponse, status: number, content: Html, headers: Record<string, string> = {}): void {
  const body = renderHtml(content);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location, "content-length": "0", ...headers });
  res.end();
}

/** Bytes as a person reads them: 12 B, 3.4 KiB, 200.0 MiB. */
export function formatSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) (value /= 1024), unit++;
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** An ISO time as "2026-11-26 04:40:43 UTC". */
export function formatTime(iso: string): string {
  return iso === "" ? "" : iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}
