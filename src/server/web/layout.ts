// The frame of every page and the headers of every web answer (docs/web-view.md#how-it-is-kept-safe): a strict CSP
// (scripts and styles only from /assets/ of this server), no sniffing, no framing, no caching.

import type { IncomingMessage, ServerResponse } from "node:http";
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

/** Where streamPage puts the body: a comment no escaped value can spell. */
const BODY_SLOT = html`<!--uspark:body-->`;

/**
 * Sends a page whose body is made part by part, each written as soon as it is made (chunked, no
 * length): the server holds one part at a time, however long the page. Stops early when the
 * visitor has gone. A HEAD request gets the headers only, nothing made.
 */
export async function streamPage(
  req: IncomingMessage,
  res: ServerResponse,
  frame: Omit<PageParts, "body">,
  body: AsyncIterable<Fragment>,
): Promise<void> {
  const [before, after] = renderHtml(page({ ...frame, body: BODY_SLOT })).split(renderHtml(BODY_SLOT)) as [string, string];
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" });
  if (req.method === "HEAD") return void res.end();
  await written(res, before);
  for await (const part of body) {
    if (res.destroyed) return;
    await written(res, renderHtml(html`${part}`));
  }
  res.end(after);
}

/** Resolves once `text` is written or buffered below the high-water mark again (or the visitor has gone). */
function written(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
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
  while (value >= 1024 && unit < units.length - 1) ((value /= 1024), unit++);
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** An ISO time as "2026-11-26 04:40:43 UTC". */
export function formatTime(iso: string): string {
  return iso === "" ? "" : iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}
