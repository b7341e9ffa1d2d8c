// Issue 46 item 7: the web view reads like a code host. Each page's facts over HTTP: changes as
// added/modified/deleted with line counts, the machine and agent of each commit, relative times with
// the exact time on hover, the commit page's file list and cards, the file page's raw view and
// history. Every name a hostile client chose (a path, a host name) shows as text.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { relativeTime } from "../../../src/server/web/when.js";
import { changeFacts } from "../../../src/server/web/change-status.js";
import { FOLD_LINES } from "../../../src/server/web/pages/change-diff.js";
import { outcomeWords, projectPath } from "../../../src/server/web/pages/session-facts.js";
import { testServer, type TestServer } from "../../kit/server.js";
import { csrfOf, WebClient } from "./web-client.js";

const HOSTILE = `<img src=x onerror=alert(1)>&"'`;
const ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;";

async function openServer() {
  const t = await testServer({});
  const web = new WebClient(t.url);
  await web.signIn("");
  return { t, web };
}

/** Commits `changes` (path → content, null: delete) as `source`; returns the new version. */
async function commit(t: TestServer, changes: Record<string, string | null>, source?: Record<string, string>): Promise<number> {
  const list = [];
  for (const [path, content] of Object.entries(changes))
    list.push(content === null ? { op: "delete", path } : { op: "put", path, ...(await t.upload(content)) });
  const res = await t.commit({ changes: list, ...(source ? { source } : {}) }, randomUUID());
  expect(res.status).toBe(200);
  return ((await res.json()) as { version: number }).version;
}

describe("relative times and change statuses (plain values)", () => {
  it("says how long ago in the largest whole unit", () => {
    const now = Date.parse("2026-12-02T12:00:00Z");
    const table: [string, string][] = [
      ["2026-12-02T11:59:30Z", "just now"],
      ["2026-12-02T11:59:00Z", "1 minute ago"],
      ["2026-12-02T11:57:00Z", "3 minutes ago"],
      ["2026-12-02T10:00:00Z", "2 hours ago"],
      ["2026-11-30T12:00:00Z", "2 days ago"],
      ["2026-09-01T12:00:00Z", "3 months ago"],
      ["2024-12-01T12:00:00Z", "2 years ago"],
      ["2026-12-02T12:05:00Z", "in the future"],
      ["not a time", ""],
    ];
    for (const [iso, words] of table) expect([iso, relativeTime(iso, now)]).toEqual([iso, words]);
  });

  it("tells added, modified and deleted from the paths held before, commit after commit", () => {
    const put = (path: string, sha256: string) => ({ op: "put" as const, path, sha256, size: 1 });
    const facts = changeFacts(new Map([["a", "h1"]]), [
      { changes: [put("a", "h2"), put("b", "h3")] },
      { changes: [{ op: "delete", path: "a" }, put("b", "h4")] },
      { changes: [put("a", "h5")] },
    ]);
    expect(facts).toEqual([
      [
        { status: "M", oldHash: "h1" },
        { status: "A", oldHash: undefined },
      ],
      [
        { status: "D", oldHash: "h2" },
        { status: "M", oldHash: "h3" },
      ],
      [{ status: "A", oldHash: undefined }],
    ]);
  });
});

describe("the commit list", () => {
  it("shows each path added, modified or deleted with its line counts, the machine and agent, and a relative time with the exact one on hover", async () => {
    const { t, web } = await openServer();
    await commit(t, { "a.txt": "one\ntwo\n", "gone.txt": "x\n" }, { agent: "push", host: "laptop" });
    await commit(t, { "a.txt": "one\n2\nthree\n", "gone.txt": null, "new.txt": "n\n" }, { agent: "watch", host: "devbox" });
    const list = (await web.get("/p/demo/commits")).text;
    const [v2, v1] = list.split('<a href="/p/demo/commits/1">').map((part) => part.slice(part.indexOf("<td")));
    expect(v2).toContain(
      '<span class="status sM" title="modified">M</span> <code>a.txt</code> <span class="counts"><span class="added">+2</span> <span class="removed">−1</span></span>',
    );
    expect(v2).toContain(
      '<span class="status sD" title="deleted">D</span> <code>gone.txt</code> <span class="counts"><span class="added">+0</span> <span class="removed">−1</span></span>',
    );
    expect(v2).toContain('<span class="status sA" title="added">A</span> <code>new.txt</code>');
    expect(v2).toContain("<td>devbox</td>\n<td>watch</td>");
    expect(v1).toContain(
      '<span class="status sA" title="added">A</span> <code>a.txt</code> <span class="counts"><span class="added">+2</span> <span class="removed">−0</span></span>',
    );
    expect(v1).toContain("<td>laptop</td>\n<td>push</td>");
    expect(list).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">just now<\/time>/);
  });

  it("the tree and the projects list say their times the same way", async () => {
    const { t, web } = await openServer();
    await commit(t, { "a.txt": "1\n" });
    for (const page of ["/", "/p/demo"])
      expect((await web.get(page)).text).toMatch(/<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">just now<\/time>/);
  });

  it("knows a path's state from before the page: a modification on the second page of history is M", async () => {
    const { t, web } = await openServer();
    await commit(t, { "a.txt": "1\n" });
    for (let i = 0; i < 50; i++) await commit(t, { [`f${i}.txt`]: "x\n" });
    await commit(t, { "a.txt": "2\n" });
    const list = (await web.get("/p/demo/commits")).text;
    expect(list).toContain('<span class="status sM" title="modified">M</span> <code>a.txt</code>');
  });

  it("escapes a hostile path, host name and agent", async () => {
    const { t, web } = await openServer();
    await commit(t, { [`${HOSTILE}.txt`]: "x\n" }, { agent: HOSTILE, host: HOSTILE });
    for (const page of ["/p/demo/commits", "/p/demo/commits/1"]) {
      const text = (await web.get(page)).text;
      expect(text).not.toContain("<img");
      expect(text).toContain(ESCAPED);
    }
  });
});

describe("the commit page", () => {
  it("opens with its byline and file list (status, path, +/−), then a card per file linking to the file at this commit and its history", async () => {
    const { t, web } = await openServer();
    await commit(t, { "src/a.ts": "one\ntwo\n", "old.txt": "bye\n" });
    await commit(t, { "src/a.ts": "one\n2\n", "old.txt": null, "b.md": "# b\n" }, { agent: "claude", host: "laptop", sessionId: "s-1" });
    const text = (await web.get("/p/demo/commits/2")).text;
    expect(text).toMatch(
      /<p class="byline"><time [^>]+>just now<\/time> · on <strong class="host">laptop<\/strong> · by <strong>claude<\/strong> · session <a href="\/p\/demo\/sessions\/s-1">s-1<\/a> · 3 files changed<\/p>/,
    );
    const list = text.slice(text.indexOf('<table class="filelist">'), text.indexOf("</table>"));
    expect(list).toContain(
      '<td><span class="status sM" title="modified">M</span></td><td><a href="#file-1"><code>src/a.ts</code></a></td><td class="num"><span class="counts"><span class="added">+1</span> <span class="removed">−1</span></span></td>',
    );
    expect(list).toContain('<span class="status sD" title="deleted">D</span></td><td><a href="#file-2"><code>old.txt</code></a>');
    expect(list).toContain('<span class="status sA" title="added">A</span></td><td><a href="#file-3"><code>b.md</code></a>');
    expect(text.indexOf('<table class="filelist">')).toBeLessThan(text.indexOf('<section class="card"'));
    expect(text).toContain('<section class="card" id="file-1"><details open>');
    expect(text).toContain('<a href="/p/demo/f/src/a.ts?at=2">view file</a> · <a href="/p/demo/f/src/a.ts?at=2#history">history</a>');
    // A deleted file's card is folded, and links to the file as it was.
    expect(text).toContain('<section class="card" id="file-2"><details>');
    expect(text).toContain('<a href="/p/demo/f/old.txt?at=1">file before</a>');
    // Line numbers: old and new, from the hunk header.
    expect(text).toContain('<span class="same"><span class="ln" data-old="1" data-new="1"></span> one\n</span>');
  });

  it("folds a long diff (a <details> not open), still within the budget", async () => {
    const { t, web } = await openServer();
    const long = Array.from({ length: FOLD_LINES + 10 }, (_, i) => `line ${i}`).join("\n") + "\n";
    await commit(t, { "long.txt": long, "short.txt": "s\n" });
    const text = (await web.get("/p/demo/commits/1")).text;
    expect(text).toContain('<section class="card" id="file-1"><details>');
    expect(text).toContain("added, folded: open to show");
    expect(text).toContain('<section class="card" id="file-2"><details open>');
  });
});

describe("the file page", () => {
  it("links its raw text and download, lists its history newest first with status, machine and agent, and shows an earlier version with ?at=", async () => {
    const { t, web } = await openServer();
    await commit(t, { "a.txt": "first\n" }, { agent: "push", host: "laptop" });
    await commit(t, { "other.txt": "o\n" });
    await commit(t, { "a.txt": "second <b>\n" }, { agent: "watch", host: "devbox" });
    const now = (await web.get("/p/demo/f/a.txt")).text;
    expect(now).toContain(
      '<a href="/p/demo/f/a.txt?raw=1">raw</a> · <a href="/p/demo/f/a.txt?download=1">download</a> · <a href="#history">history</a>',
    );
    const history = now.slice(now.indexOf('<section id="history">'));
    expect(history.indexOf(">v3<")).toBeLessThan(history.indexOf(">v1<"));
    expect(history).not.toContain(">v2<");
    expect(history).toMatch(
      /<tr class="here"><td><span class="status sM" title="modified">M<\/span><\/td>\n<td class="num"><a href="\/p\/demo\/commits\/3">v3<\/a><\/td>\n<td>devbox<\/td><td>watch<\/td>/,
    );
    expect(history).toContain(
      '<span class="status sA" title="added">A</span></td>\n<td class="num"><a href="/p/demo/commits/1">v1</a></td>\n<td>laptop</td><td>push</td>',
    );
    const raw = await web.get("/p/demo/f/a.txt?raw=1");
    expect(raw.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(raw.headers.get("x-content-type-options")).toBe("nosniff");
    expect(raw.text).toBe("second <b>\n");
    const before = (await web.get("/p/demo/f/a.txt?at=1")).text;
    expect(before).toContain("first\n");
    expect(before).toContain('as of <a href="/p/demo/commits/1">v1</a> · <a href="/p/demo/f/a.txt">the latest</a>');
    expect(before).toContain('<a href="/p/demo/f/a.txt?at=1&amp;raw=1">raw</a>');
    expect((await web.get("/p/demo/f/other.txt?at=1")).status).toBe(404);
  });

  it("a deleted file is still there as an earlier version left it", async () => {
    const { t, web } = await openServer();
    await commit(t, { "gone.txt": "was here\n" });
    await commit(t, { "gone.txt": null });
    expect((await web.get("/p/demo/f/gone.txt")).status).toBe(404);
    const page = await web.get("/p/demo/f/gone.txt?at=1");
    expect(page.status).toBe(200);
    expect(page.text).toContain("was here");
    expect(page.text).toContain('<span class="status sD" title="deleted">D</span>');
  });
});

/** A Claude stream-json session run in `cwd`: its prompt, a Write of `file` (absolute), a result of `subtype`. */
function claudeRun(sessionId: string, cwd: string, prompt: string, file: string, subtype: string): string {
  const failed = subtype !== "success";
  const events = [
    { type: "system", subtype: "init", session_id: sessionId, cwd, tools: ["Write"], model: "claude-sonnet-4-5" },
    { type: "user", session_id: sessionId, message: { role: "user", content: [{ type: "text", text: prompt }] } },
    {
      type: "assistant",
      session_id: sessionId,
      message: { content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: file, content: "x" } }] },
    },
    { type: "user", session_id: sessionId, message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] } },
    { type: "result", subtype, session_id: sessionId, is_error: failed, ...(failed ? {} : { result: "All done." }) },
  ];
  return events.map((event) => JSON.stringify(event)).join("\n") + "\n";
}

async function putTranscript(t: TestServer, sessionId: string, text: string): Promise<void> {
  expect((await t.request(`/sessions/${sessionId}/events?offset=0`, { method: "PUT", body: text })).status).toBe(200);
}

describe("project paths of a session (plain values)", () => {
  it("cuts the agent's directory, or finds the project file an absolute path ends with", () => {
    const files = new Set(["src/a.ts", "a.ts"]);
    const has = (path: string) => files.has(path);
    const table: [string, string | undefined, string | undefined][] = [
      ["/home/me/app/src/a.ts", "/home/me/app", "src/a.ts"],
      ["/home/me/app/src/a.ts", "/home/me/app/", "src/a.ts"],
      ["/home/me/other/x.ts", "/home/me/app", undefined],
      ["/home/me/app/../etc/passwd", "/home/me/app", undefined],
      ["src/./a.ts", "/home/me/app", "src/a.ts"],
      ["/work/clone/src/a.ts", undefined, "src/a.ts"],
      ["/work/clone/new.ts", undefined, undefined],
    ];
    for (const [path, cwd, want] of table) expect([path, cwd, projectPath(path, cwd, has)]).toEqual([path, cwd, want]);
  });

  it("says the agents' raw outcomes in words and leaves other text alone", () => {
    expect(outcomeWords("error_during_execution")).toBe("failed while running");
    expect(outcomeWords("error_max_turns")).toBe("stopped: it reached the most turns it was allowed");
    expect(outcomeWords("Not logged in · Please run /login")).toBe("Not logged in · Please run /login");
  });
});

describe("the sessions pages", () => {
  it("list each session by its first prompt with its machine, agent, start and last activity", async () => {
    const { t, web } = await openServer();
    await commit(t, { "src/a.ts": "a\n" }, { agent: "claude", host: "laptop", sessionId: "s-1" });
    await putTranscript(t, "s-1", claudeRun("s-1", "/home/me/app", `Make <b>it</b> & "go"`, "/home/me/app/src/a.ts", "success"));
    const list = (await web.get("/p/demo/sessions")).text;
    expect(list).toContain(
      '<a href="/p/demo/sessions/s-1" class="prompt-line">Make &lt;b&gt;it&lt;/b&gt; &amp; &quot;go&quot;</a><br><code class="muted">s-1</code>',
    );
    expect(list).toContain("<td>laptop</td><td>claude</td>");
    expect(list.match(/<time datetime=/g)?.length).toBe(2);
  });

  it("shows the agent machine's absolute paths as project paths linked to the file at the session's commit, its times, and the outcome in words", async () => {
    const { t, web } = await openServer();
    await commit(t, { "src/a.ts": "a\n" }, { agent: "claude", host: "laptop", sessionId: "s-2" });
    await commit(t, { "src/a.ts": "b\n" });
    await putTranscript(t, "s-2", claudeRun("s-2", "/home/me/app", "go", "/home/me/app/src/a.ts", "error_during_execution"));
    const text = (await web.get("/p/demo/sessions/s-2")).text;
    expect(text).toContain(
      '<a href="/p/demo/f/src/a.ts?at=1" title="/home/me/app/src/a.ts"><code>src/a.ts</code></a> <a href="/p/demo/commits/1" class="muted">v1</a>',
    );
    expect(text).toContain("<p><code>src/a.ts</code></p>"); // the call's summary, cut to the project
    expect(text).not.toContain("<code>/home/me/app/src/a.ts</code>");
    expect(text).toContain("<h3>Failed</h3><p>failed while running</p>");
    expect(text).not.toContain("error_during_execution");
    expect(text).toMatch(
      /<p class="byline">started <time [^>]+>just now<\/time> · last active <time [^>]+>just now<\/time> · on <strong class="host">laptop<\/strong> · by <strong>claude<\/strong><\/p>/,
    );
  });

  it("escapes a hostile agent directory and path", async () => {
    const { t, web } = await openServer();
    await commit(t, { "x.txt": "x\n" }, { agent: "claude", host: HOSTILE, sessionId: "s-3" });
    await putTranscript(t, "s-3", claudeRun("s-3", `/tmp/${HOSTILE}`, "go", `/tmp/${HOSTILE}/${HOSTILE}.ts`, "success"));
    for (const page of ["/p/demo/sessions", "/p/demo/sessions/s-3"]) {
      const text = (await web.get(page)).text;
      expect(text).not.toContain("<img");
      expect(text).toContain(ESCAPED);
    }
  });
});

describe("device approval", () => {
  const ADMIN = "admin-token-for-device-page";

  async function deviceServer() {
    const t = await testServer({ token: ADMIN, projects: ["demo", "my-app"] });
    const web = new WebClient(t.url);
    await web.signIn(ADMIN);
    return { t, web };
  }

  /** POST /api/device/code as `uspark login --project … --scope …` sends it. */
  async function startLogin(t: TestServer, fields: [string, string][]): Promise<{ user_code: string; device_code: string }> {
    const res = await fetch(`${t.url}/api/device/code`, {
      method: "POST",
      body: new URLSearchParams([["client_id", "uspark"], ...fields]),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { user_code: string; device_code: string };
  }

  it("ticks the projects and selects the access the CLI asked for, says which machine asked, and ends on 'approved: return to your terminal' without the form", async () => {
    const { t, web } = await deviceServer();
    const { user_code } = await startLogin(t, [
      ["project", "my-app"],
      ["scope", "write"],
      ["host", "laptop"],
    ]);
    const form = (await web.get(`/device?user_code=${user_code}`)).text;
    expect(form).toContain(
      '<code>uspark login</code> on <strong class="host">laptop</strong> asks for <strong>write</strong> access to <code>my-app</code>.',
    );
    expect(form).toContain('<input type="checkbox" name="project" value="my-app" id="project-1" checked>');
    expect(form).toContain('<input type="checkbox" name="project" value="demo" id="project-0">');
    expect(form).toContain('<option value="write" selected>read and write</option>');
    const done = await web.post("/device", { user_code, action: "approve", project: "my-app", access: "write" }, csrfOf(form));
    expect(done.status).toBe(200);
    expect(done.text).toContain("<strong>Approved: return to your terminal.</strong>");
    expect(done.text).toContain('<code>uspark login</code> on <strong class="host">laptop</strong>');
    expect(done.text).toContain("a <strong>write</strong> token for <code>my-app</code>");
    expect(done.text).not.toContain('<form method="post" action="/device"');
  });

  it("without a request, nothing is ticked and read is the default; a project asked for that does not exist is said, not ticked", async () => {
    const { t, web } = await deviceServer();
    const plain = await startLogin(t, []);
    const form = (await web.get(`/device?user_code=${plain.user_code}`)).text;
    expect(form).not.toContain(" checked");
    expect(form).not.toContain(" selected");
    expect(form).toContain("Type the code <code>uspark login</code> shows");
    const odd = await startLogin(t, [
      ["project", "nope"],
      ["project", "../x"],
    ]);
    const oddForm = (await web.get(`/device?user_code=${odd.user_code}`)).text;
    expect(oddForm).toContain("an unnamed machine");
    expect(oddForm).toContain("Not offered (no such project, or your token may not see it): nope.");
    expect(oddForm).not.toContain("../x");
    expect(oddForm).not.toContain(" checked");
  });

  it("escapes a hostile host name", async () => {
    const { t, web } = await deviceServer();
    const { user_code } = await startLogin(t, [["host", HOSTILE]]);
    const form = await web.get(`/device?user_code=${user_code}`);
    expect(form.text).not.toContain("<img");
    expect(form.text).toContain(`<strong class="host">${ESCAPED}</strong>`);
    const denied = await web.post("/device", { user_code, action: "deny" }, csrfOf(form.text));
    expect(denied.text).toContain(`<strong>Denied</strong>: <code>uspark login</code> on <strong class="host">${ESCAPED}</strong>`);
    expect(denied.text).not.toContain("<img");
  });
});
