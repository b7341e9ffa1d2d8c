// Issue 44 item 7: a server, with a token or without, answers only the Host names it serves
// (DNS rebinding) and refuses cross-site state-changing requests (Origin, Sec-Fetch-Site), on the
// API and on the web view.

import { describe, expect, it } from "vitest";
import { API_ROUTES, parseRoute, type Route } from "../../src/server/routes/table.js";
import { parseWebRoute, WEB_ROUTES, type WebRoute } from "../../src/server/web/web-routes.js";
import { COOKIE_NAME } from "../../src/server/web/web-sessions.js";
import { rawRequest, testServer } from "../kit/server.js";
import { csrfOf, WebClient } from "./web/web-client.js";

/** A request over real HTTP with exactly these headers (fetch() would set its own Host). */
function send(url: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  return rawRequest(
    url,
    method,
    path,
    { ...headers, ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }) },
    body,
  );
}

describe("a server started without a token", () => {
  it("does not answer a foreign Host (DNS rebinding): GET of the files is 421, nothing read", async () => {
    const t = await testServer({});
    await t.write("secret.txt", "the PIN is 1234\n");
    const port = new URL(t.url).port;
    const answer = await send(t.url, "GET", "/api/projects/demo/files", { host: `rebind.attacker.example:${port}` });
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "misdirected_request" });
    expect(answer.body).not.toContain("secret.txt");
  });

  it("refuses a cross-site CORS-simple POST that would create a project: 403 cross_site, no project", async () => {
    const t = await testServer({});
    const answer = await send(
      t.url,
      "POST",
      "/api/projects",
      { host: new URL(t.url).host, origin: "http://attacker.example", "sec-fetch-site": "cross-site", "content-type": "text/plain" },
      JSON.stringify({ id: "pwned" }),
    );
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ error: "cross_site_request" });
    const listing = (await (await fetch(`${t.url}/api/projects`)).json()) as { projects: { id: string }[] };
    expect(listing.projects.map((p) => p.id)).not.toContain("pwned");
  });
});

describe("a server started with a token", () => {
  it("does not answer a foreign Host even with the admin token, nor a cross-site POST that carries it", async () => {
    const t = await testServer({ token: "admin-token" });
    const { host, port } = new URL(t.url);
    const auth = { authorization: "Bearer admin-token" };
    expect((await send(t.url, "GET", "/api/projects/demo/files", { ...auth, host: `rebind.attacker.example:${port}` })).status).toBe(421);
    const cross = await send(
      t.url,
      "POST",
      "/api/projects",
      { ...auth, host, origin: "http://attacker.example", "content-type": "application/json" },
      JSON.stringify({ id: "x" }),
    );
    expect(cross.status).toBe(403);
    expect((await send(t.url, "GET", "/api/projects/demo/files", { ...auth, host })).status).toBe(200);
  });
});

/** One row of the table: the request's headers besides the method and path, and whether it is refused. */
interface Variant {
  name: string;
  headers: (port: string) => Record<string, string>;
  /** "host": 421 for every method; "changes": 403 for a method that changes something; "none": answered. */
  refused: "host" | "changes" | "none";
}

const VARIANTS: Variant[] = [
  { name: "no Origin, no Sec-Fetch-Site (the CLI)", headers: (port) => ({ host: `127.0.0.1:${port}` }), refused: "none" },
  { name: "good host localhost", headers: (port) => ({ host: `localhost:${port}` }), refused: "none" },
  {
    name: "good Origin, same-origin",
    headers: (port) => ({ host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, "sec-fetch-site": "same-origin" }),
    refused: "none",
  },
  { name: "foreign host", headers: () => ({ host: "example.com" }), refused: "host" },
  { name: "rebinding name", headers: (port) => ({ host: `rebind.attacker.example:${port}` }), refused: "host" },
  { name: "loopback name, another port (a proxy in front: TLS)", headers: () => ({ host: "localhost:1" }), refused: "none" },
  { name: "foreign Origin", headers: (port) => ({ host: `127.0.0.1:${port}`, origin: "http://attacker.example" }), refused: "changes" },
  {
    name: "Origin of another local port",
    headers: (port) => ({ host: `127.0.0.1:${port}`, origin: "http://localhost:3000" }),
    refused: "changes",
  },
  { name: "Origin null", headers: (port) => ({ host: `127.0.0.1:${port}`, origin: "null" }), refused: "changes" },
  {
    name: "Origin null, same-origin (a form of its own under no-referrer)",
    headers: (port) => ({ host: `127.0.0.1:${port}`, origin: "null", "sec-fetch-site": "same-origin" }),
    refused: "none",
  },
  {
    name: "Sec-Fetch-Site cross-site",
    headers: (port) => ({ host: `127.0.0.1:${port}`, "sec-fetch-site": "cross-site" }),
    refused: "changes",
  },
  {
    name: "Sec-Fetch-Site same-site",
    headers: (port) => ({ host: `127.0.0.1:${port}`, "sec-fetch-site": "same-site" }),
    refused: "changes",
  },
];

const EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** A URL of each API route (src/server/routes/table.ts): a route without one fails the test. */
const API_EXAMPLES: Record<Route["kind"], string> = {
  healthz: "/healthz",
  readyz: "/readyz",
  projects: "/api/projects",
  deviceCode: "/api/device/code",
  deviceToken: "/api/device/token",
  files: "/api/projects/demo/files",
  commits: "/api/projects/demo/commits",
  blob: `/api/projects/demo/blobs/${EMPTY_SHA}`,
  blobs: "/api/projects/demo/blobs",
  blobsGet: "/api/projects/demo/blobs/get",
  sessions: "/api/projects/demo/sessions",
  events: "/api/projects/demo/sessions/s1/events?offset=0",
};

/** A URL of each web route (src/server/web/web-routes.ts). */
const WEB_EXAMPLES: Record<WebRoute["kind"], string> = {
  asset: "/assets/web.css",
  login: "/login",
  logout: "/logout",
  device: "/device",
  projects: "/",
  tree: "/p/demo",
  file: "/p/demo/f/a.txt",
  commits: "/p/demo/commits",
  commit: "/p/demo/commits/1",
  sessions: "/p/demo/sessions",
  session: "/p/demo/sessions/s1",
  live: "/p/demo/live?since=0",
  notFound: "/no/such/page",
};

interface Row {
  route: string;
  method: string;
  path: string;
  web: boolean;
}

function rows(): Row[] {
  const api = Object.entries(API_ROUTES).flatMap(([kind, spec]) =>
    Object.keys(spec.methods).map((method) => ({ route: kind, method, path: API_EXAMPLES[kind as Route["kind"]], web: false })),
  );
  const web = Object.entries(WEB_ROUTES).flatMap(([kind, spec]) =>
    Object.keys(spec.methods).map((method) => ({ route: `web ${kind}`, method, path: WEB_EXAMPLES[kind as WebRoute["kind"]], web: true })),
  );
  // Signing in again and out end the test's session: last, so that every other page is seen signed in.
  const last = (row: Row) => (row.route === "web login" || row.route === "web logout" ? 1 : 0);
  return [...api, ...web].sort((a, b) => last(a) - last(b));
}

describe("Host and Origin on every route, from the server's route tables", () => {
  it("each route of API_ROUTES and WEB_ROUTES has an example URL that parses as that route", () => {
    expect(Object.keys(API_EXAMPLES).sort()).toEqual(Object.keys(API_ROUTES).sort());
    expect(Object.keys(WEB_EXAMPLES).sort()).toEqual(Object.keys(WEB_ROUTES).sort());
    for (const [kind, path] of Object.entries(API_EXAMPLES)) expect(parseRoute(path).kind).toBe(kind);
    for (const [kind, path] of Object.entries(WEB_EXAMPLES)) expect(parseWebRoute(new URL(path, "http://x").pathname).kind).toBe(kind);
  });

  it("every route x every variant: 421 for a Host not served, 403 for a cross-site change, else the route's own answer", async () => {
    const t = await testServer({});
    await t.write("a.txt", "a\n");
    expect((await t.request("/sessions/s1/events?offset=0", { method: "PUT", body: "{}\n" })).status).toBe(200);
    const web = new WebClient(t.url);
    await web.signIn("");
    const csrf = csrfOf((await web.get("/")).text);
    const port = new URL(t.url).port;
    const table: string[] = [];
    for (const row of rows()) {
      for (const variant of VARIANTS) {
        const changes = row.method !== "GET" && row.method !== "HEAD";
        const form = row.web && changes;
        const headers = {
          ...variant.headers(port),
          cookie: `${COOKIE_NAME}=${web.cookie(COOKIE_NAME)}`,
          "content-type": form ? "application/x-www-form-urlencoded" : "application/json",
        };
        const body = changes ? (form ? `csrf=${encodeURIComponent(csrf)}` : "") : undefined;
        const answer = await send(t.url, row.method, row.path, headers, body);
        const expected = variant.refused === "host" ? 421 : variant.refused === "changes" && changes ? 403 : undefined;
        table.push(`${row.route} ${row.method} ${variant.name}: ${answer.status}${refusalIn(answer.body, row.web) ?? ""}`);
        if (expected === undefined) {
          expect(answer.status, table.at(-1)).not.toBe(421);
          // The route's own answer (a second create of one project is its 409): never a server failure.
          expect(answer.status, table.at(-1)).toBeLessThan(500);
          expect(refusalIn(answer.body, row.web), table.at(-1)).toBeUndefined();
        } else {
          expect(answer.status, table.at(-1)).toBe(expected);
          if (row.method !== "HEAD")
            expect(refusalIn(answer.body, row.web) ?? "", table.at(-1)).toBe(
              expected === 421 ? " misdirected_request" : " cross_site_request",
            );
          expect(String(answer.headers["content-type"]), table.at(-1)).toMatch(row.web ? /^text\/html/ : /^application\/json/);
        }
      }
    }
  });
});

/** Which refusal of the Host and Origin check an answer is, if any (" misdirected_request", " cross_site_request"). */
function refusalIn(body: string, web: boolean): string | undefined {
  if (!web) {
    const code = /"error":"(misdirected_request|cross_site_request)"/.exec(body)?.[1];
    return code === undefined ? undefined : ` ${code}`;
  }
  if (body.includes("does not answer to the name")) return " misdirected_request";
  if (body.includes("request from another site may not change")) return " cross_site_request";
  return undefined;
}
