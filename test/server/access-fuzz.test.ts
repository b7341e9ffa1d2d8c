// A fuzz of every route's parameters (docs/api.md, "Access"), generated from the route tables:
// path traversal, session ids, versions, Unicode, huge values, sent raw and percent-encoded by a
// write token of one project. No answer is a 5xx, and none holds a byte of the other project.

import { describe, expect, it } from "vitest";
import { API_ROUTES } from "../../src/server/routes/table.js";
import { WEB_ROUTES } from "../../src/server/web/web-routes.js";
import { rawRequest, tempDir, testServer } from "../kit/server.js";
import { csrfOf, mintToken, WebClient } from "./web/web-client.js";

const ADMIN = "admin-token-for-the-fuzz";
const MARKER = "SECRET-MARKER-7f3a";

const HOSTILE = [
  "..",
  ".",
  "../secret",
  "../../secret/sessions/s1",
  "..\\..\\secret",
  "%2e%2e",
  "%2e%2e%2fsecret",
  "secret%00",
  "%00",
  "%ff%fe",
  "é",
  "😀",
  "\u202e",
  "s1/../../../secret",
  "~" + "0".repeat(64),
  "-1",
  "1e309",
  "99999999999999999999999",
  " ",
  "a".repeat(300),
  "a".repeat(70_000),
];

/** `template` with every `{name}` replaced: raw (as an attacker types it) or percent-encoded. */
function fill(template: string, value: string, encode: boolean): string {
  const put = encode ? encodeURIComponent(value) : value;
  return template.replace(/\{[^}]+\}/g, (name) => (name === "{anything else}" ? put : name === "{project}" ? "p" : put));
}

/** Query parameters each route reads, every one fuzzed in turn. */
const QUERIES = [
  "version",
  "since",
  "limit",
  "path",
  "wait",
  "offset",
  "session",
  "length",
  "dir",
  "from",
  "line",
  "page",
  "before",
  "download",
  "raw",
  "at",
  "user_code",
];

function targets(): { method: string; path: string; web: boolean }[] {
  const out: { method: string; path: string; web: boolean }[] = [];
  for (const [tables, web] of [
    [API_ROUTES, false],
    [WEB_ROUTES, true],
  ] as const) {
    for (const spec of Object.values(tables)) {
      for (const method of Object.keys(spec.methods).filter((m) => m === "GET" || m === "HEAD")) {
        for (const value of HOSTILE) {
          // Raw only what an HTTP client lets through unescaped (visible ASCII).
          for (const encode of /^[\x21-\x7e]*$/.test(value) ? [false, true] : [true]) {
            if (spec.path.includes("{") && spec.path !== "/p/{project}") out.push({ method, web, path: fill(spec.path, value, encode) });
            // The project id itself.
            if (spec.path.includes("{project}"))
              out.push({
                method,
                web,
                path: spec.path.replace("{project}", encode ? encodeURIComponent(value) : value).replace(/\{[^}]+\}/g, "x"),
              });
          }
          const base = fill(spec.path, "s1", false).replace("{anything else}", "x");
          // The live poll waits unless something changed: since=0 answers at once.
          const fixed = spec.path.endsWith("/live") ? "since=0&" : "";
          // Each parameter alone (one refused first would hide the others), on GET: HEAD reads the same.
          if (method === "GET" && value.length < 1000 && (spec.path.includes("{project}") || spec.path === "/device"))
            for (const name of QUERIES) out.push({ method, web, path: `${base}?${fixed}${name}=${encodeURIComponent(value)}` });
        }
      }
    }
  }
  return out;
}

describe("the fuzz of every route's parameters", () => {
  it("answers no 5xx and nothing of another project, to a write token of one, on the API and the web view", async () => {
    const t = await testServer({ token: ADMIN, projects: ["p", "secret"], dataDir: await tempDir() });
    await t.write("a.txt", "public text\n", "p");
    await t.write("s1", `${MARKER}\n`, "secret");
    expect((await t.request("/sessions/s1/events?offset=0", { method: "PUT", body: "{}\n" }, "p")).status).toBe(200);
    expect((await t.request("/sessions/s1/events?offset=0", { method: "PUT", body: `{"m":"${MARKER}"}\n` }, "secret")).status).toBe(200);
    const { secret } = await mintToken(t, { projects: ["p"], access: "write" });
    const web = new WebClient(t.url);
    await web.signIn(secret);
    const cookie = `uspark_session=${web.cookie("uspark_session")}`;
    expect(csrfOf((await web.get("/device")).text)).toBeTruthy();

    const bad: string[] = [];
    const all = targets();
    for (const { method, path, web: isWeb } of all) {
      const headers: Record<string, string> = isWeb ? { cookie } : { authorization: `Bearer ${secret}` };
      const answer = await rawRequest(t.url, method, path, headers).catch((error: Error) => ({ status: 0, body: error.message }));
      if (answer.status === 0 || answer.status >= 500 || answer.body.includes(MARKER))
        bad.push(`${method} ${path.slice(0, 120)}: ${answer.status}`);
    }
    // Writes: each path parameter of a PUT or POST, and the paths of a commit's body.
    for (const spec of Object.values(API_ROUTES).filter((s) => s.path.includes("{project}"))) {
      for (const method of Object.keys(spec.methods).filter((m) => m === "PUT" || m === "POST")) {
        for (const value of HOSTILE.filter((v) => v.length < 1000)) {
          const body =
            method === "POST" ? JSON.stringify({ sha256: [value], changes: [{ op: "put", path: value, sha256: value, size: 1 }] }) : "x";
          const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": "fuzz" };
          const res = await fetch(t.url + fill(spec.path, value, true) + "?offset=0", { method, headers, body });
          const text = await res.text();
          if (res.status >= 500 || text.includes(MARKER)) bad.push(`${method} ${spec.path} with ${value.slice(0, 40)}: ${res.status}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(all.length).toBeGreaterThan(1000);
    // Nothing the fuzz sent landed in the other project.
    expect((await t.files("secret")).files.map((f) => f.path)).toEqual(["s1"]);
  }, 120_000);
});
