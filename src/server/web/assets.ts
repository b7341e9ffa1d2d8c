// The web view's only script and style sheet, served from /assets/ of the server itself (the CSP
// allows nothing else). Plain text here: no build step.

import type { ServerResponse } from "node:http";
import { SECURITY_HEADERS } from "./layout.js";

/**
 * Live pages: the body's data-live names a web route that answers once the page is out of date
 * (a new commit, a longer transcript); the page's <main> is then fetched again and swapped in. The
 * new HTML comes from the same server-rendered, escaped page, parsed inert by DOMParser.
 */
const LIVE_JS = `"use strict";
(function () {
  var pause = function (ms) { return new Promise(function (done) { setTimeout(done, ms); }); };
  async function refresh() {
    var res = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
    if (!res.ok) return;
    var fresh = new DOMParser().parseFromString(await res.text(), "text/html");
    var main = fresh.getElementById("main");
    var old = document.getElementById("main");
    if (main && old) old.replaceWith(document.adoptNode(main));
    document.body.dataset.live = fresh.body.dataset.live || "";
  }
  async function watch() {
    while (document.body.dataset.live) {
      try {
        var res = await fetch(document.body.dataset.live, { credentials: "same-origin", cache: "no-store" });
        if (res.status === 401 || res.status === 403) return;
        if (!res.ok) { await pause(5000); continue; }
        var answer = await res.json();
        if (answer.changed) await refresh();
      } catch (error) {
        await pause(5000);
      }
    }
  }
  document.addEventListener("DOMContentLoaded", watch);
})();
`;

const WEB_CSS = `:root { color-scheme: light dark; --muted: #6a737d; --line: #d0d7de; --add: #e6ffec; --del: #ffebe9; --head: #f6f8fa; --green: #1a7f37; --red: #cf222e; --amber: #9a6700; }
@media (prefers-color-scheme: dark) { :root { --line: #30363d; --add: #12361f; --del: #3c1618; --head: #161b22; --green: #3fb950; --red: #f85149; --amber: #d29922; } }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 0 1rem 3rem; }
header { display: flex; justify-content: space-between; align-items: center; border-bottom: 1px solid var(--line); padding: .6rem 0; }
h1 { font-size: 1.3rem; word-break: break-all; }
a:focus, button:focus, input:focus, select:focus { outline: 3px solid #0969da; outline-offset: 1px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
pre, code { font: 13px/1.4 ui-monospace, monospace; }
pre.lines { overflow-x: auto; counter-reset: none; }
.lines .n { color: var(--muted); user-select: none; display: inline-block; min-width: 4rem; text-align: right; padding-right: 1rem; }
pre.diff { margin: 0; overflow-x: auto; }
.diff > code > span { display: block; padding-right: .6rem; }
.diff .add { background: var(--add); }
.diff .del { background: var(--del); }
.diff .hunk, .diff .note { color: var(--muted); }
.diff .ln { display: inline-block; user-select: none; color: var(--muted); }
.diff .ln::before, .diff .ln::after { display: inline-block; width: 3.5em; text-align: right; padding-right: .6em; }
.diff .ln::before { content: attr(data-old); }
.diff .ln::after { content: attr(data-new); }
section.card { border: 1px solid var(--line); border-radius: 6px; margin: 1rem 0; overflow: hidden; }
section.card summary { background: var(--head); padding: .45rem .7rem; cursor: pointer; border-bottom: 1px solid var(--line); }
section.card .links { float: right; font-size: .9em; }
section.card > details > p { padding: 0 .7rem; }
.status { display: inline-block; width: 1.3em; text-align: center; border-radius: 3px; font: 600 12px/1.5 ui-monospace, monospace; color: #fff; }
.status.sA { background: var(--green); }
.status.sM { background: var(--amber); }
.status.sD { background: var(--red); }
.counts { font: 12px ui-monospace, monospace; white-space: nowrap; }
.counts .added { color: var(--green); }
.counts .removed { color: var(--red); }
ul.changes { list-style: none; margin: 0; padding: 0; }
.byline { color: var(--muted); }
.byline strong { color: CanvasText; font-weight: 600; }
time { white-space: nowrap; }
tr.here { background: var(--head); }
.filelist td:first-child, #history td:first-child { width: 1.5em; }
#history table { width: auto; min-width: 60%; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
.notice { border: 1px solid var(--green); border-radius: 6px; padding: 1rem; max-width: 30rem; }
.notice.error { border-color: var(--red); }
.prompt-line { overflow-wrap: anywhere; }
.step { border-left: 3px solid var(--line); margin: .8rem 0; padding: .2rem .8rem; }
.step.prompt { border-color: #8250df; }
.step.text { border-color: #0969da; }
.step.tool { border-color: #9a6700; }
.step.failed, .step.result.failed { border-color: #cf222e; }
.step p { white-space: pre-wrap; margin: .3rem 0; overflow-wrap: anywhere; }
.signout button, form button { font: inherit; }
form.card { border: 1px solid var(--line); padding: 1rem; max-width: 30rem; }
form.card label { display: block; margin: .5rem 0 .2rem; }
.error { color: #cf222e; }
`;

const ASSETS: Record<string, { type: string; body: string }> = {
  "/assets/live.js": { type: "text/javascript; charset=utf-8", body: LIVE_JS },
  "/assets/web.css": { type: "text/css; charset=utf-8", body: WEB_CSS },
};

/** Sends the asset at `path`; false when there is none. */
export function sendAsset(res: ServerResponse, path: string): boolean {
  const asset = ASSETS[path];
  if (!asset) return false;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "content-type": asset.type,
    "content-length": String(Buffer.byteLength(asset.body)),
  });
  res.end(asset.body);
  return true;
}
