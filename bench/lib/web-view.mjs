// The web view's page load time: the file tree of a project of `files` files and the session
// page of a large transcript, each as the server's answer (first, when the page's project index is
// built, and again) and as Chromium's load (navigation start to the load event, the page's script
// and style included), on the reference server on 127.0.0.1. Chromium: Debian's /usr/bin/chromium
// driven by playwright-core; without it, or with `browser: false`, the browser figures are left out.
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, existsSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createProject } from "./measure.mjs";

const CHROMIUM = "/usr/bin/chromium";
const CHANGES_PER_COMMIT = 5000;
const APPEND_BYTES = 8 * 1024 * 1024;

export async function measureWebView({ repo, work, files, sessionPath, sessionId, browser: withBrowser = true }) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const server = await startServer({ dataDir: path.join(work, "web-data"), port: 0, host: "127.0.0.1" });
  try {
    await createProject(server.url, "web");
    await commitFiles(server.url, files);
    await appendTranscript(server.url, sessionId, sessionPath);
    const cookie = await signIn(server.url);
    const last = Math.max(0, statSync(sessionPath).size - 512 * 1024);
    const pages = {
      tree: "/p/web",
      treeDir: "/p/web?dir=d0%2Fs0",
      session: `/p/web/sessions/${sessionId}`,
      sessionLast: `/p/web/sessions/${sessionId}?from=${last}`,
    };
    const answers = {};
    for (const [name, page] of Object.entries(pages)) {
      answers[name] = { first: await answerMs(server.url + page, cookie), again: await answerMs(server.url + page, cookie) };
    }
    const browser = withBrowser && existsSync(CHROMIUM) ? await browserLoads(server.url, cookie, pages) : undefined;
    return { files, transcriptBytes: statSync(sessionPath).size, answers, browser };
  } finally {
    await server.close();
  }
}

/** `files` files in directories of 100 (d{i}/s{j}/f{k}.txt), one content, in commits of CHANGES_PER_COMMIT. */
async function commitFiles(url, files) {
  const content = Buffer.from("export const value = 1;\n");
  const sha256 = createHash("sha256").update(content).digest("hex");
  await fetch(`${url}/api/projects/web/blobs/${sha256}`, { method: "PUT", body: content });
  for (let start = 0; start < files; start += CHANGES_PER_COMMIT) {
    const changes = [];
    for (let i = start; i < Math.min(files, start + CHANGES_PER_COMMIT); i++) {
      changes.push({
        op: "put",
        path: `d${Math.floor(i / 1000)}/s${Math.floor(i / 100) % 10}/f${i % 100}.txt`,
        sha256,
        size: content.length,
      });
    }
    const res = await fetch(`${url}/api/projects/web/commits`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify({ changes, source: { agent: "claude", sessionId: "bench" } }),
    });
    if (res.status !== 200) throw new Error(`commit answered ${res.status}: ${await res.text()}`);
  }
}

async function appendTranscript(url, sessionId, sessionPath) {
  let offset = 0;
  for await (const chunk of createReadStream(sessionPath, { highWaterMark: APPEND_BYTES })) {
    const res = await fetch(`${url}/api/projects/web/sessions/${sessionId}/events?offset=${offset}`, { method: "PUT", body: chunk });
    if (res.status !== 200) throw new Error(`append answered ${res.status}`);
    offset += chunk.length;
  }
}

/** Signs in through /login as a browser would; returns the session cookie. */
export async function signIn(url) {
  const form = await fetch(`${url}/login`);
  const cookie = form.headers.getSetCookie()[0].split(";")[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())[1];
  const res = await fetch(`${url}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf, token: "bench" }).toString(),
  });
  return res.headers.getSetCookie()[0].split(";")[0];
}

/** Milliseconds from the request to the page's last byte. */
async function answerMs(url, cookie) {
  const started = performance.now();
  const res = await fetch(url, { headers: { cookie } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return performance.now() - started;
}

/** Chromium's load of each page (navigation start to the load event end), after one warm-up. */
async function browserLoads(url, cookie, pages) {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const context = await browser.newContext();
    const [name, value] = cookie.split("=");
    await context.addCookies([{ name, value, url }]);
    const page = await context.newPage();
    const loads = {};
    for (const [key, pagePath] of Object.entries(pages)) {
      await page.goto(url + pagePath);
      await page.goto("about:blank");
      await page.goto(url + pagePath);
      loads[key] = await page.evaluate(() => performance.getEntriesByType("navigation")[0].loadEventEnd);
      await page.goto("about:blank");
    }
    return loads;
  } finally {
    await browser.close();
  }
}
