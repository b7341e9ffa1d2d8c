// The web view over plain HTTP (docs/web-view.md#how-it-is-kept-safe): sign-in and its cookie, CSP and nosniff on every
// page, escaping, CSRF, revoked tokens, read-only views, paging, downloads, device approval, live.

import { existsSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import path from "node:path";
import { Agent, request } from "node:http";
import { describe, expect, it } from "vitest";
import { conversationFormats } from "../../../src/agents/conversation/index.js";
import { eventually, testServer, type TestServer } from "../../kit/server.js";
import { usePgCluster } from "../../kit/pg-cluster.js";
import { claudeTranscript, csrfOf, mintToken, revokeToken, WebClient } from "./web-client.js";
import { SESSIONS_PAGE } from "../../../src/server/web/pages/sessions.js";

const ADMIN = "admin-token-for-web-tests";
const XSS_NAME = "<img src=x onerror=alert(1)>";

async function signedIn(t: TestServer, token = ADMIN): Promise<WebClient> {
  const web = new WebClient(t.url);
  await web.signIn(token);
  return web;
}

async function putTranscript(t: TestServer, sessionId: string, text: string): Promise<void> {
  const res = await t.request(`/sessions/${sessionId}/events?offset=0`, { method: "PUT", body: text });
  expect(res.status).toBe(200);
}

describe("web view sign-in", () => {
  it("sends a visitor to /login, signs in with the token form, keeps the token out of the HttpOnly SameSite=Strict cookie", async () => {
    const t = await testServer({ token: ADMIN });
    const web = new WebClient(t.url);
    const first = await web.get("/");
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/login");
    const login = await web.get("/login");
    expect(login.text).toMatch(/<form method="post" action="\/login"/);
    expect(login.text).toMatch(/name="token"/);
    const wrong = await web.post("/login", { token: "not-it" });
    expect(wrong.status).toBe(401);
    const ok = await web.post("/login", { token: ADMIN });
    expect(ok.status).toBe(303);
    const setCookie = ok.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toContain(ADMIN);
    expect((await web.get("/")).status).toBe(200);
    // The API keeps its own bearer check and JSON errors.
    const api = await fetch(`${t.url}/api/projects`);
    expect(api.status).toBe(401);
    expect(await api.json()).toMatchObject({ error: "unauthorized" });
  });

  it("on a server started without a token the sign-in page says so and signing in needs none; with a token, an empty one is refused", async () => {
    const open = await testServer({});
    const web = new WebClient(open.url);
    const login = await web.get("/login");
    expect(login.text).toContain("This server was started without a token");
    expect(login.text).not.toMatch(/name="token"[^>]*required/);
    expect((await web.post("/login", { token: "" })).status).toBe(303);
    expect((await web.get("/")).status).toBe(200);
    const closed = await testServer({ token: ADMIN });
    const visitor = new WebClient(closed.url);
    const form = await visitor.get("/login");
    expect(form.text).not.toContain("started without a token");
    expect(form.text).toMatch(/name="token"[^>]*required/);
    expect((await visitor.post("/login", { token: "" })).status).toBe(401);
  });

  it("after sign-in, back to the page that sent the visitor there (the device link of uspark login), never to another site", async () => {
    const t = await testServer({ token: ADMIN });
    const web = new WebClient(t.url);
    const first = await web.get("/device?user_code=BCDF-GHJK");
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/login?next=%2Fdevice%3Fuser_code%3DBCDF-GHJK");
    const form = await web.get(first.headers.get("location")!);
    expect(form.text).toContain('<input type="hidden" name="next" value="/device?user_code=BCDF-GHJK">');
    const wrong = await web.post("/login", { token: "not-it", next: "/device?user_code=BCDF-GHJK" });
    expect(wrong.text).toContain('<input type="hidden" name="next" value="/device?user_code=BCDF-GHJK">');
    const ok = await web.post("/login", { token: ADMIN, next: "/device?user_code=BCDF-GHJK" });
    expect(ok.headers.get("location")).toBe("/device?user_code=BCDF-GHJK");
    for (const next of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/login", "device"]) {
      const other = new WebClient(t.url);
      expect((await other.post("/login", { token: ADMIN, next })).headers.get("location"), next).toBe("/");
    }
    expect((await new WebClient(t.url).get("/")).headers.get("location")).toBe("/login");
  });

  it("a new session id at sign-in: the id the browser had before signing in is not signed in", async () => {
    const t = await testServer({ token: ADMIN });
    const web = new WebClient(t.url);
    await web.get("/login");
    const before = web.cookie("uspark_session");
    await web.signIn(ADMIN);
    expect(web.cookie("uspark_session")).not.toBe(before);
    const old = await fetch(`${t.url}/`, { headers: { cookie: `uspark_session=${before}` }, redirect: "manual" });
    expect(old.status).toBe(303);
  });

  it("refuses a POST whose CSRF field is not the session's: sign-in, sign-out, new project", async () => {
    const t = await testServer({ token: ADMIN });
    const web = await signedIn(t);
    expect((await web.post("/", { id: "made" }, "forged")).status).toBe(403);
    expect((await web.post("/logout", {}, "forged")).status).toBe(403);
    expect((await web.get("/")).status).toBe(200);
    const fresh = new WebClient(t.url);
    await fresh.get("/login");
    expect((await fresh.post("/login", { token: ADMIN }, "forged")).status).toBe(403);
    expect((await web.post("/", { id: "made" })).status).toBe(303);
    const listed = (await (await fetch(`${t.url}/api/projects`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      projects: unknown[];
    };
    expect(listed.projects).toContainEqual(expect.objectContaining({ id: "made" }));
    expect((await web.post("/logout", {})).status).toBe(303);
    expect((await web.get("/")).status).toBe(303);
  });

  it("signs a revoked token out at its very next page", async () => {
    const t = await testServer({ token: ADMIN });
    const { secret, id } = await mintToken(t, { projects: ["demo"], access: "read" });
    const web = await signedIn(t, secret);
    expect((await web.get("/p/demo")).status).toBe(200);
    await revokeToken(t, id);
    const after = await web.get("/p/demo");
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toBe("/login?next=%2Fp%2Fdemo");
    expect((await web.get("/p/demo/live?since=0")).status).toBe(401);
  });
});

describe("web view pages", () => {
  it("sets the strict CSP, nosniff and no framing on every page and asset", async () => {
    const t = await testServer({ token: ADMIN });
    await t.write("src/a.ts", "one\n");
    await putTranscript(t, "s-1", claudeTranscript("s-1", "hi", "src/a.ts"));
    const web = await signedIn(t);
    for (const path of [
      "/login",
      "/",
      "/p/demo",
      "/p/demo?dir=src",
      "/p/demo/f/src/a.ts",
      "/p/demo/f/src/a.ts?download=1",
      "/p/demo/commits",
      "/p/demo/commits/1",
      "/p/demo/sessions",
      "/p/demo/sessions/s-1",
      "/device",
      "/assets/live.js",
      "/assets/web.css",
      "/nowhere",
    ]) {
      const answer = await web.get(path);
      expect(answer.status, path).toBeLessThan(path === "/nowhere" ? 500 : 400);
      const csp = answer.headers.get("content-security-policy")!;
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
      ])
        expect(csp, path).toContain(directive);
      expect(csp).not.toMatch(/unsafe/);
      expect(answer.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(answer.headers.get("x-frame-options"), path).toBe("DENY");
      // No inline script, no inline handler: every <script> comes from /assets/.
      expect(answer.text.match(/<script[^>]*>/g) ?? []).toEqual(
        path.startsWith("/assets") || path.includes("download") ? [] : ['<script src="/assets/live.js" defer>'],
      );
      expect(answer.text).not.toMatch(/\son[a-z]+=/i);
    }
  });

  it("shows a file named like markup, markup content and HTML in the agent's text as text", async () => {
    const t = await testServer({ token: ADMIN });
    await t.write(XSS_NAME, "<script>alert(1)</script>\n");
    await putTranscript(t, "s-x", claudeTranscript("s-x", "Look: <b onclick=alert(1)>bold</b><script>alert(2)</script>", XSS_NAME));
    const web = await signedIn(t);
    const tree = await web.get("/p/demo");
    expect(tree.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(tree.text).not.toContain(XSS_NAME);
    const file = await web.get(`/p/demo/f/${encodeURIComponent(XSS_NAME)}`);
    expect(file.status).toBe(200);
    expect(file.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    const session = await web.get("/p/demo/sessions/s-x");
    expect(session.text).toContain("Look: &lt;b onclick=alert(1)&gt;bold&lt;/b&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
    expect(session.text).not.toContain("<b onclick");
  });

  it("gives a read token no form that writes, and refuses its POST of a project", async () => {
    const t = await testServer({ token: ADMIN, projects: ["demo", "not-yours"] });
    await t.write("a.txt", "a\n");
    const { secret } = await mintToken(t, { projects: ["demo"], access: "read" });
    const web = await signedIn(t, secret);
    for (const path of ["/", "/p/demo", "/p/demo/f/a.txt", "/p/demo/commits", "/p/demo/commits/1", "/p/demo/sessions"]) {
      const forms = (await web.get(path)).text.match(/<form[^>]*>/g) ?? [];
      expect(forms, path).toEqual(['<form method="post" action="/logout" class="signout">']);
    }
    expect((await web.get("/")).text).not.toContain("not-yours");
    expect((await web.get("/p/not-yours")).status).toBe(403);
    expect((await web.get("/p/absent")).status).toBe(403);
    const device = await web.get("/device");
    expect(device.text).not.toContain('value="write"');
    expect((await web.post("/", { id: "new" }, csrfOf((await web.get("/")).text))).status).toBe(403);
  });

  it("pages a long file by byte offset to its last line, with its number", async () => {
    const t = await testServer({ token: ADMIN });
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i + 1} ${"x".repeat(i % 40)}`);
    await t.write("long.txt", lines.join("\n") + "\n");
    const web = await signedIn(t);
    const first = await web.get("/p/demo/f/long.txt");
    expect(first.text).toContain('<span class="n">1</span>line 1 \n');
    const last = /<a href="([^"]+)">last<\/a>/.exec(first.text)![1]!.replaceAll("&amp;", "&");
    const end = await web.get(last);
    expect(end.text).toContain(`<span class="n">60000</span>line 60000 ${"x".repeat(59_999 % 40)}\n`);
    // Following "next" links reaches the same last line, each number continuing the page before.
    let page = first.text;
    let pages = 1;
    for (let next = /<a href="([^"]+)">next →<\/a>/.exec(page); next; next = /<a href="([^"]+)">next →<\/a>/.exec(page)) {
      page = (await web.get(next[1]!.replaceAll("&amp;", "&"))).text;
      pages++;
    }
    expect(pages).toBeGreaterThan(4);
    expect(page).toContain('<span class="n">60000</span>line 60000');
  });

  it("offers a binary file as a download only: attachment, octet-stream, nosniff", async () => {
    const t = await testServer({ token: ADMIN });
    const bytes = Buffer.from([0, 1, 2, 255, 0, 60, 115, 99, 114, 105, 112, 116, 62]);
    const blob = await t.upload(bytes);
    expect((await t.commit({ changes: [{ op: "put", path: "bin/it's (1).html", ...blob }] })).status).toBe(200);
    const web = await signedIn(t);
    const href = `/p/demo/f/bin/${encodeURIComponent("it's (1).html")}`;
    const view = await web.get(href);
    expect(view.text).toContain("A binary file of 13 B");
    const res = await fetch(`${t.url}${href}?download=1`, { headers: { cookie: `uspark_session=${web.cookie("uspark_session")}` } });
    expect(res.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''it%27s%20%281%29.html");
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("lists one directory at a time, 200 entries a page, with sizes and last change", async () => {
    const t = await testServer({ token: ADMIN });
    const blob = await t.upload("same");
    const changes = Array.from({ length: 450 }, (_, i) => ({ op: "put", path: `big/f${String(i).padStart(3, "0")}.txt`, ...blob }));
    expect((await t.commit({ changes: [...changes, { op: "put", path: "big/sub/deep/z.txt", ...blob }] })).status).toBe(200);
    const web = await signedIn(t);
    const root = await web.get("/p/demo");
    expect(root.text).toContain('<a href="/p/demo?dir=big">big/</a></td><td class="num" title="451 files">1.8 KiB</td>');
    const big = await web.get("/p/demo?dir=big");
    expect(big.text).toContain("451 entries · page 1 of 3");
    expect(big.text).toContain(">sub/</a>");
    expect(big.text).toContain(">f198.txt</a>");
    expect(big.text).not.toContain(">f199.txt</a>");
    const third = await web.get("/p/demo?dir=big&page=3");
    expect(third.text).toContain(">f449.txt</a>");
    expect(third.text).toContain('<a href="/p/demo/commits/1">v1</a>');
    expect((await web.get("/p/demo?dir=nope")).status).toBe(404);
  });

  it("shows commits newest first and one commit as unified diffs with literal -/+ lines", async () => {
    const t = await testServer({ token: ADMIN });
    await t.write("a.txt", "one\ntwo\n");
    await t.write("a.txt", "one\n2\n");
    const web = await signedIn(t);
    const list = await web.get("/p/demo/commits");
    expect(list.text.indexOf(">v2<")).toBeLessThan(list.text.indexOf(">v1<"));
    const diff = await web.get("/p/demo/commits/2");
    expect(diff.text).toContain(
      '<span class="del"><span class="ln" data-old="2" data-new=""></span>-two\n</span><span class="add"><span class="ln" data-old="" data-new="2"></span>+2\n</span>',
    );
    expect((await web.get("/p/demo/commits/3")).status).toBe(404);
  });

  it("renders a session as a conversation linked to its commits, and pages its transcript by byte offset", async () => {
    const t = await testServer({ token: ADMIN });
    const blob = await t.upload("x");
    const commit = await t.commit({ changes: [{ op: "put", path: "src/a.ts", ...blob }], source: { agent: "claude", sessionId: "s-1" } });
    expect(commit.status).toBe(200);
    const one = claudeTranscript("s-1", "I will write src/a.ts", "src/a.ts");
    // About 1.5 MiB: three pages.
    await putTranscript(t, "s-1", one.repeat(Math.ceil((1.5 * 1024 * 1024) / one.length)));
    const web = await signedIn(t);
    const page = await web.get("/p/demo/sessions/s-1");
    expect(page.text).toContain("claude · bytes 0-");
    expect(page.text).toContain("<h3>Agent</h3><p>I will write src/a.ts</p>");
    expect(page.text).toContain(
      '<a href="/p/demo/f/src/a.ts?at=1" title="src/a.ts"><code>src/a.ts</code></a> <a href="/p/demo/commits/1" class="muted">v1</a>',
    );
    expect(page.text).toContain('Commits of this session: <a href="/p/demo/commits/1">v1</a>');
    expect(page.text).toContain('<h3>Write <span class="muted">done</span></h3>');
    const last = /<a href="([^"]+)">last<\/a>/.exec(page.text)![1]!.replaceAll("&amp;", "&");
    const end = await web.get(last);
    expect(end.text).toContain("<h3>Result</h3><p>All done.</p>");
    expect(end.text).toContain('data-live="/p/demo/live?since=1&amp;session=s-1&amp;length=');
    const list = await web.get("/p/demo/sessions");
    expect(list.text).toContain('<a href="/p/demo/sessions/s-1"><code>s-1</code></a>');
    expect(list.text).toContain('<p class="muted">1 session</p>');
  });

  it("lists the sessions latest activity first (the running one on top), not by id", async () => {
    const t = await testServer({ token: ADMIN });
    await putTranscript(t, "s-a", claudeTranscript("s-a", "old", "a.txt"));
    await putTranscript(t, "s-z", claudeTranscript("s-z", "new", "z.txt"));
    // s-a's last append was in 2020 (the file store's time is its file's).
    const stale = new Date("2020-01-02T03:04:05Z");
    utimesSync(findFile(t.dataDir, "s-a.ndjson"), stale, stale);
    const blob = await t.upload("m");
    await t.commit({ changes: [{ op: "put", path: "m.txt", ...blob }], source: { agent: "codex", sessionId: "s-m" } });
    const list = (await (await signedIn(t)).get("/p/demo/sessions")).text;
    const order = [...list.matchAll(/<a href="\/p\/demo\/sessions\/([^"]+)">/g)].map((m) => m[1]);
    expect(order.slice(-1)).toEqual(["s-a"]);
    expect(order.sort()).toEqual(["s-a", "s-m", "s-z"]);
    expect(list).toContain("<th>Last activity</th>");
    expect(list).toContain("2020-01-02 03:04:05 UTC");
  });

  it("lists sessions a page at a time: a CI loop makes one a run", async () => {
    const t = await testServer({ token: ADMIN });
    for (let i = 0; i < SESSIONS_PAGE + 5; i++) await putTranscript(t, `s-${String(i).padStart(3, "0")}`, "{}\n");
    const web = await signedIn(t);
    const rows = (text: string) => [...text.matchAll(/<a href="\/p\/demo\/sessions\/([^"?]+)">/g)].map((m) => m[1]);
    const first = await web.get("/p/demo/sessions");
    expect(rows(first.text)).toHaveLength(SESSIONS_PAGE);
    expect(first.text).toContain(`${SESSIONS_PAGE + 5} sessions · page 1 of 2`);
    const next = /<a href="([^"]+)">older →<\/a>/.exec(first.text)![1]!.replaceAll("&amp;", "&");
    const second = await web.get(next);
    expect(rows(second.text)).toHaveLength(5);
    expect(new Set([...rows(first.text), ...rows(second.text)]).size).toBe(SESSIONS_PAGE + 5);
  });

  it("answers a live wait as soon as a commit comes", async () => {
    const t = await testServer({ token: ADMIN });
    const web = await signedIn(t);
    const waiting = web.get("/p/demo/live?since=0");
    const started = Date.now();
    await t.write("a.txt", "a");
    const answer = await waiting;
    expect(JSON.parse(answer.text)).toEqual({ changed: true });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("device login approved in the web view", () => {
  it("gives the waiting device a token with the granted scope, once approved on /device", async () => {
    const t = await testServer({ token: ADMIN });
    const start = await fetch(`${t.url}/api/device/code`, { method: "POST" });
    const code = (await start.json()) as { device_code: string; user_code: string; verification_uri_complete: string };
    const poll = () =>
      fetch(`${t.url}/api/device/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: code.device_code }).toString(),
      });
    expect((await poll()).status).toBe(400);
    const web = await signedIn(t);
    const page = await web.get(new URL(code.verification_uri_complete).pathname + new URL(code.verification_uri_complete).search);
    expect(page.text).toContain(`value="${code.user_code}"`);
    const wrong = await web.post(
      "/device",
      { user_code: "BBBB-BBBB", action: "approve", project: "demo", access: "read" },
      csrfOf(page.text),
    );
    expect(wrong.text).toContain("No login waits with that code");
    const approved = await web.post(
      "/device",
      { user_code: code.user_code, action: "approve", project: "demo", access: "read" },
      csrfOf(page.text),
    );
    expect(approved.text).toContain("Approved");
    const granted = await poll();
    expect(granted.status).toBe(200);
    const { access_token } = (await granted.json()) as { access_token: string };
    expect((await fetch(`${t.url}/api/projects/demo/files`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
  });

  it("an approval without a project asks for one and keeps the code typed; a server without projects says to create one", async () => {
    const t = await testServer({ token: ADMIN });
    const { user_code } = (await (await fetch(`${t.url}/api/device/code`, { method: "POST" })).json()) as { user_code: string };
    const web = await signedIn(t);
    const page = await web.get(`/device?user_code=${user_code}`);
    const none = await web.post("/device", { user_code, action: "approve", access: "read" }, csrfOf(page.text));
    expect(none.status).toBe(400);
    expect(none.text).toContain("Choose at least one project for the login to use.");
    expect(none.text).toContain(`value="${user_code}"`);
    const empty = await testServer({ token: ADMIN, projects: [] });
    const admin = await signedIn(empty);
    expect((await admin.get("/device")).text).toContain('No project yet: <a href="/">create one</a> first.');
  });
});

describe("the login form's own session", () => {
  it("survives the browser's other requests before the form is sent (a favicon, a page)", async () => {
    const t = await testServer({ token: ADMIN });
    const web = new WebClient(t.url);
    const csrf = csrfOf((await web.get("/login")).text);
    expect((await web.get("/favicon.ico")).status).toBe(404);
    expect((await web.get("/p/demo")).status).toBe(303);
    expect((await web.post("/login", { token: ADMIN }, csrf)).status).toBe(303);
  });
});

describe("live waits and closing", () => {
  it("lets the server close while a page keeps waiting: a wait answers at once, with its connection closed", async () => {
    const t = await testServer({ token: ADMIN });
    const web = await signedIn(t);
    const cookie = `uspark_session=${web.cookie("uspark_session")}`;
    // One kept-alive socket, as a browser's page reuses for its next wait.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        request(`${t.url}${path}`, { agent, headers: { cookie } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        })
          .on("error", reject)
          .end();
      });
    const first = get("/p/demo/live?since=0");
    await eventually(async () => t.waiting() === 1);
    const started = Date.now();
    const closed = t.close();
    expect(await first).toEqual({ status: 200, connection: "close" });
    // The page's next wait right away: it must not hold the closing server open.
    const next = get("/p/demo/live?since=0").catch(() => undefined);
    await closed;
    await next;
    expect(Date.now() - started).toBeLessThan(5_000);
    agent.destroy();
  });
});

describe("sessions of every agent format", () => {
  it.each(conversationFormats.filter((format) => existsSync(`fixtures/${format}/session.jsonl`)))(
    "renders the %s fixture's session as a conversation",
    async (format) => {
      const t = await testServer({ token: ADMIN });
      await putTranscript(t, "s-1", readFileSync(`fixtures/${format}/session.jsonl`, "utf8"));
      const web = await signedIn(t);
      const page = await web.get("/p/demo/sessions/s-1");
      expect(page.status).toBe(200);
      // Told apart from the others by its own events (Qwen and Amp read as Claude-shaped streams).
      expect(page.text).toMatch(/<p class="muted">[a-z]+ · bytes 0-/);
      expect(page.text).not.toContain("unknown format");
      expect((page.text.match(/<section class="step/g) ?? []).length).toBeGreaterThan(0);
    },
  );
});

describe("on the PostgreSQL store", () => {
  const pg = usePgCluster();

  it("serves every page of a project kept in PostgreSQL, a long file's last page and a transcript's included", async () => {
    const t = await testServer({ token: ADMIN, pg });
    const lines = Array.from({ length: 40_000 }, (_, i) => `row ${i + 1}`);
    await t.write("data/rows.txt", lines.join("\n") + "\n");
    const blob = await t.upload("x");
    await t.commit({ changes: [{ op: "put", path: "src/a.ts", ...blob }], source: { agent: "claude", sessionId: "s-1" } });
    await putTranscript(t, "s-1", claudeTranscript("s-1", "Writing <src/a.ts>", "src/a.ts"));
    const web = await signedIn(t);
    for (const path of [
      "/",
      "/p/demo",
      "/p/demo?dir=data",
      "/p/demo/commits",
      "/p/demo/commits/2",
      "/p/demo/sessions",
      "/p/demo/sessions/s-1",
    ]) {
      expect((await web.get(path)).status, path).toBe(200);
    }
    const file = await web.get("/p/demo/f/data/rows.txt");
    const last = /<a href="([^"]+)">last<\/a>/.exec(file.text)![1]!.replaceAll("&amp;", "&");
    expect((await web.get(last)).text).toContain('<span class="n">40000</span>row 40000\n');
    expect((await web.get("/p/demo/sessions/s-1")).text).toContain("<p>Writing &lt;src/a.ts&gt;</p>");
  });
});

/** The one file called `name` under `dir`, at any depth. */
function findFile(dir: string, name: string): string {
  const found = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) => path.basename(p) === name);
  expect(found).toHaveLength(1);
  return path.join(dir, found[0]!);
}
