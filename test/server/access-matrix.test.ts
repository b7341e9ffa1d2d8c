// The authorization matrix (docs/api.md, "Access"), generated from the server's own route tables
// (API_ROUTES, WEB_ROUTES): every route and method x every credential x an existing and a missing
// project, over HTTP on a real server. A route added to a table without a request below fails.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API_ROUTES, type Need, type Route } from "../../src/server/routes/table.js";
import { hashOfSecret } from "../../src/server/tokens.js";
import { WEB_ROUTES, type WebRoute } from "../../src/server/web/web-routes.js";
import { sha256, storeCases, type TestServer } from "../kit/server.js";
import { testClock, type TestClock } from "../kit/clock.js";
import { usePgCluster } from "../kit/pg-cluster.js";
import { createToken, openCredentials, type TokenRecord } from "../../src/server/index.js";
import type { CredentialStore } from "../../src/server/credentials.js";
import { PgCredentials } from "../../src/server/pg/credentials.js";
import type { TokenSpec } from "../../src/server/tokens.js";
import { csrfOf } from "./web/web-client.js";

const pg = usePgCluster();
const ADMIN = "admin-token-for-the-matrix";
const HERE = "p";
const MISSING = "nope";
const OTHER = "other";
const BLOB = "matrix blob\n";
const EVENTS = '{"type":"x"}\n';

const CREDENTIALS = [
  "none",
  "malformed",
  "admin",
  "readThis",
  "writeThis",
  "readOther",
  "writeOther",
  "revoked",
  "expired",
  "childOfRevoked",
] as const;
type Credential = (typeof CREDENTIALS)[number];

/** "ok": the row's own answer; "out": refused as not signed in (API 401; web: 303 to /login, 401 for a POST or the live poll). */
type Outcome = "ok" | "out" | 403 | 404;

/** The one table: what each credential gets for what a route needs, [existing project, missing project]. */
const OUT = ["out", "out"] as const;
const MATRIX: Record<Need, Record<Credential, readonly [Outcome, Outcome]>> = {
  public: {
    none: ["ok", "ok"],
    malformed: ["ok", "ok"],
    admin: ["ok", "ok"],
    readThis: ["ok", "ok"],
    writeThis: ["ok", "ok"],
    readOther: ["ok", "ok"],
    writeOther: ["ok", "ok"],
    revoked: ["ok", "ok"],
    expired: ["ok", "ok"],
    childOfRevoked: ["ok", "ok"],
  },
  token: {
    none: OUT,
    malformed: OUT,
    admin: ["ok", "ok"],
    readThis: ["ok", "ok"],
    writeThis: ["ok", "ok"],
    readOther: ["ok", "ok"],
    writeOther: ["ok", "ok"],
    revoked: OUT,
    expired: OUT,
    childOfRevoked: OUT,
  },
  admin: {
    none: OUT,
    malformed: OUT,
    admin: ["ok", "ok"],
    readThis: [403, 403],
    writeThis: [403, 403],
    readOther: [403, 403],
    writeOther: [403, 403],
    revoked: OUT,
    expired: OUT,
    childOfRevoked: OUT,
  },
  read: {
    none: OUT,
    malformed: OUT,
    admin: ["ok", 404],
    readThis: ["ok", 404],
    writeThis: ["ok", 404],
    readOther: [403, 403],
    writeOther: [403, 403],
    revoked: OUT,
    expired: OUT,
    childOfRevoked: OUT,
  },
  write: {
    none: OUT,
    malformed: OUT,
    admin: ["ok", 404],
    readThis: [403, 403],
    writeThis: ["ok", 404],
    readOther: [403, 403],
    writeOther: [403, 403],
    revoked: OUT,
    expired: OUT,
    childOfRevoked: OUT,
  },
};

interface Sample {
  path: string;
  init?: RequestInit;
  /** The answer when allowed. */
  ok: number;
}

/** One request per route and method of the API, for a project (the probes and /api/projects ignore it). */
const API_SAMPLES: Record<Route["kind"], Record<string, (project: string) => Sample>> = {
  healthz: { GET: () => ({ path: "/healthz", ok: 200 }), HEAD: () => ({ path: "/healthz", ok: 200 }) },
  readyz: { GET: () => ({ path: "/readyz", ok: 200 }), HEAD: () => ({ path: "/readyz", ok: 200 }) },
  projects: {
    GET: () => ({ path: "/api/projects", ok: 200 }),
    HEAD: () => ({ path: "/api/projects", ok: 200 }),
    POST: () => ({ path: "/api/projects", init: json({ id: `made-${randomUUID()}` }), ok: 201 }),
  },
  deviceCode: {
    POST: () => ({ path: "/api/device/code", init: { method: "POST", body: new URLSearchParams({ client_id: "x" }) }, ok: 200 }),
  },
  deviceToken: {
    POST: () => ({
      path: "/api/device/token",
      init: {
        method: "POST",
        body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "none" }),
      },
      ok: 400,
    }),
  },
  files: { GET: (p) => ({ path: `/api/projects/${p}/files`, ok: 200 }), HEAD: (p) => ({ path: `/api/projects/${p}/files`, ok: 200 }) },
  blob: {
    GET: (p) => ({ path: `/api/projects/${p}/blobs/${sha256(BLOB)}`, ok: 200 }),
    HEAD: (p) => ({ path: `/api/projects/${p}/blobs/${sha256(BLOB)}`, ok: 200 }),
    PUT: (p) => ({ path: `/api/projects/${p}/blobs/${sha256(BLOB)}`, init: { method: "PUT", body: BLOB }, ok: 200 }),
  },
  blobs: { POST: (p) => ({ path: `/api/projects/${p}/blobs`, init: multipart(BLOB), ok: 200 }) },
  blobsGet: { POST: (p) => ({ path: `/api/projects/${p}/blobs/get`, init: json({ sha256: [sha256(BLOB)] }), ok: 200 }) },
  commits: {
    GET: (p) => ({ path: `/api/projects/${p}/commits?since=0`, ok: 200 }),
    POST: (p) => ({ path: `/api/projects/${p}/commits`, init: commitInit(), ok: 200 }),
  },
  sessions: {
    GET: (p) => ({ path: `/api/projects/${p}/sessions`, ok: 200 }),
    HEAD: (p) => ({ path: `/api/projects/${p}/sessions`, ok: 200 }),
  },
  events: {
    GET: (p) => ({ path: `/api/projects/${p}/sessions/s1/events`, ok: 200 }),
    HEAD: (p) => ({ path: `/api/projects/${p}/sessions/s1/events`, ok: 200 }),
    PUT: (p) => ({ path: `/api/projects/${p}/sessions/s1/events?offset=0`, init: { method: "PUT", body: EVENTS }, ok: 200 }),
  },
};

/** One request per route and method of the web view (a POST's fields; the CSRF field is the session's). */
const WEB_SAMPLES: Record<WebRoute["kind"], Record<string, (project: string) => Sample & { form?: Record<string, string> }>> = {
  asset: { GET: () => ({ path: "/assets/web.css", ok: 200 }), HEAD: () => ({ path: "/assets/web.css", ok: 200 }) },
  // Sent without the form's CSRF field: refused (403) whoever sends it.
  login: {
    GET: () => ({ path: "/login", ok: 200 }),
    HEAD: () => ({ path: "/login", ok: 200 }),
    POST: () => ({ path: "/login", form: { token: "wrong" }, ok: 403 }),
  },
  logout: { POST: () => ({ path: "/logout", form: {}, ok: 303 }) },
  device: {
    GET: () => ({ path: "/device", ok: 200 }),
    HEAD: () => ({ path: "/device", ok: 200 }),
    POST: () => ({ path: "/device", form: { user_code: "BCDF-GHJK", action: "approve", project: HERE, access: "read" }, ok: 400 }),
  },
  projects: {
    GET: () => ({ path: "/", ok: 200 }),
    HEAD: () => ({ path: "/", ok: 200 }),
    POST: () => ({ path: "/", form: { id: `made-${randomUUID()}` }, ok: 303 }),
  },
  tree: { GET: (p) => ({ path: `/p/${p}`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}`, ok: 200 }) },
  file: { GET: (p) => ({ path: `/p/${p}/f/a.txt`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}/f/a.txt?download=1`, ok: 200 }) },
  commits: { GET: (p) => ({ path: `/p/${p}/commits`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}/commits`, ok: 200 }) },
  commit: { GET: (p) => ({ path: `/p/${p}/commits/1`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}/commits/1`, ok: 200 }) },
  sessions: { GET: (p) => ({ path: `/p/${p}/sessions`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}/sessions`, ok: 200 }) },
  session: { GET: (p) => ({ path: `/p/${p}/sessions/s1`, ok: 200 }), HEAD: (p) => ({ path: `/p/${p}/sessions/s1`, ok: 200 }) },
  live: { GET: (p) => ({ path: `/p/${p}/live?since=0`, ok: 200 }) },
  notFound: {
    GET: () => ({ path: "/nowhere", ok: 404 }),
    HEAD: () => ({ path: "/nowhere", ok: 404 }),
    POST: () => ({ path: "/nowhere", form: {}, ok: 404 }),
  },
};

function json(body: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function commitInit(): RequestInit {
  const init = json({ changes: [{ op: "put", path: "a.txt", sha256: sha256(BLOB), size: Buffer.byteLength(BLOB) }] });
  return { ...init, headers: { ...(init.headers as Record<string, string>), "idempotency-key": randomUUID() } };
}

function multipart(content: string): RequestInit {
  const form = new FormData();
  form.append(sha256(content), new Blob([content]), sha256(content));
  return { method: "POST", body: form };
}

/** Whether a project route (the missing project matters) or one that names none. */
function namesProject(path: string): boolean {
  return path.includes("{project}");
}

function expected(need: Need, credential: Credential, missing: boolean, ok: number, signedOut: number): number {
  const outcome = MATRIX[need][credential][missing ? 1 : 0];
  return outcome === "ok" ? ok : outcome === "out" ? signedOut : outcome;
}

/**
 * The token of each credential, made on `t`'s store, and `end`, which revokes and outlives those
 * that must be refused (after web sessions were signed in with them).
 */
async function credentials(
  t: TestServer,
  clock: TestClock,
): Promise<{ tokens: Record<Credential, string | undefined>; end(): Promise<void> }> {
  const both = [HERE, MISSING];
  const readThis = await mintToken(t, { projects: both, access: "read" });
  const writeThis = await mintToken(t, { projects: both, access: "write" });
  const readOther = await mintToken(t, { projects: [OTHER], access: "read" });
  const writeOther = await mintToken(t, { projects: [OTHER], access: "write" });
  const revoked = await mintToken(t, { projects: both, access: "write" });
  const parent = await mintToken(t, { projects: both, access: "write" });
  const child = await deviceChild(t, parent);
  // Expires on the server's clock, which `end` moves past it: no wait, however slow the sign-ins.
  const expiresAt = clock.now() + 60_000;
  const expired = await mintToken(t, { projects: both, access: "write", expires: expiresAt });
  const tokens = {
    none: undefined,
    malformed: "not a bearer token",
    admin: ADMIN,
    readThis: readThis.secret,
    writeThis: writeThis.secret,
    readOther: readOther.secret,
    writeOther: writeOther.secret,
    revoked: revoked.secret,
    expired: expired.secret,
    childOfRevoked: child,
  } satisfies Record<Credential, string | undefined>;
  const end = async () => {
    for (const id of [revoked.id, parent.id]) await revokeToken(t, id);
    clock.advance(expiresAt - clock.now() + 1);
  };
  return { tokens, end };
}

/** The Authorization header of a credential: a malformed one is no bearer token at all. */
function authorization(credential: Credential, token: string | undefined): Record<string, string> {
  if (credential === "malformed") return { authorization: "Basic bm90OmEtdG9rZW4=" };
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** A token made and revoked as `uspark serve token` would, on the store `t` serves (on --db through the test's pool: no store of its own to open). */
async function onStore<T>(t: TestServer, work: (credentials: CredentialStore) => Promise<T>): Promise<T> {
  if (t.databaseUrl) return work(new PgCredentials(t.pool(), () => {}));
  const opened = await openCredentials({ dataDir: t.dataDir });
  try {
    return await work(opened.credentials);
  } finally {
    await opened.close();
  }
}

async function mintToken(t: TestServer, spec: TokenSpec): Promise<{ secret: string; id: string }> {
  const { secret, record }: { secret: string; record: TokenRecord } = await onStore(t, (credentials) =>
    createToken(credentials, spec, Date.now()),
  );
  return { secret, id: record.id };
}

async function revokeToken(t: TestServer, id: string): Promise<void> {
  await onStore(t, (credentials) => credentials.revokeToken(id, Date.now()));
}

/** A token a device login gets once `parent` approves it. */
async function deviceChild(t: TestServer, parent: { id: string; secret: string }): Promise<string> {
  const started = (await (await fetch(`${t.url}/api/device/code`, { method: "POST" })).json()) as {
    device_code: string;
    user_code: string;
  };
  const by = {
    kind: "scoped",
    tokenId: parent.id,
    tokenHash: hashOfSecret(parent.secret),
    access: "write",
    projects: [HERE, MISSING],
  } as const;
  expect(await t.devices.approve(started.user_code, { projects: [HERE, MISSING], access: "write" }, by)).toBe("approved");
  const granted = await fetch(`${t.url}/api/device/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code }),
  });
  return ((await granted.json()) as { access_token: string }).access_token;
}

/** A signed-in web session of `token` (its cookie and the CSRF field of its forms), or a cookie nobody signed in with. */
async function webSession(t: TestServer, credential: Credential, token: string | undefined): Promise<{ cookie?: string; csrf: string }> {
  if (credential === "none") return { csrf: "" };
  if (credential === "malformed") return { cookie: "uspark_session=not-a-session", csrf: "x" };
  const form = await fetch(`${t.url}/login`);
  const formCookie = cookieOf(form);
  const signIn = await fetch(`${t.url}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: formCookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf: csrfOf(await form.text()), token: token! }).toString(),
  });
  expect(signIn.status, `sign-in as ${credential}`).toBe(303);
  const cookie = cookieOf(signIn);
  const device = await fetch(`${t.url}/device`, { headers: { cookie } });
  return { cookie, csrf: csrfOf(await device.text()) };
}

function cookieOf(res: Response): string {
  return res.headers.getSetCookie()[0]!.split(";")[0]!;
}

describe.each(storeCases(pg))("the authorization matrix on %s", (_name, testServer) => {
  it("every route of the API and the web view has a request here, for every method it answers", () => {
    for (const [tables, samples] of [
      [API_ROUTES, API_SAMPLES],
      [WEB_ROUTES, WEB_SAMPLES],
    ] as const) {
      expect(Object.keys(samples).sort()).toEqual(Object.keys(tables).sort());
      for (const [kind, spec] of Object.entries(tables))
        expect(Object.keys((samples as Record<string, object>)[kind]!).sort(), kind).toEqual(Object.keys(spec.methods).sort());
    }
  });

  it("answers every route x credential x existing and missing project as the table says", async () => {
    const clock = testClock();
    const t = await testServer({ token: ADMIN, projects: [HERE, OTHER], now: clock.now });
    await t.write("a.txt", BLOB, HERE);
    expect((await t.request("/sessions/s1/events?offset=0", { method: "PUT", body: EVENTS }, HERE)).status).toBe(200);
    const { tokens: made, end } = await credentials(t, clock);
    const cases = [
      ...Object.entries(API_ROUTES).flatMap(([kind, spec]) =>
        Object.entries(spec.methods).map(([method, need]) => ({ web: false, kind, method, need, spec })),
      ),
      ...Object.entries(WEB_ROUTES).flatMap(([kind, spec]) =>
        Object.entries(spec.methods).map(([method, need]) => ({ web: true, kind, method, need, spec })),
      ),
    ].flatMap((c) =>
      (namesProject(c.spec.path) ? [false, true] : [false]).flatMap((missing) =>
        CREDENTIALS.map((credential) => ({ ...c, missing, credential })),
      ),
    );

    // A web session a request (a refused one is closed, a logout ends one); those of the credentials
    // refused later are signed in while they still hold.
    const sessions = new Map<(typeof cases)[number], { cookie?: string; csrf: string }>();
    const refusedLater = new Set<Credential>(["expired", "revoked", "childOfRevoked"]);
    // Signed in before `end` revokes or expires their tokens.
    const early = cases.filter((c) => c.web && refusedLater.has(c.credential));
    for (const [c, session] of await Promise.all(
      early.map(async (c) => [c, await webSession(t, c.credential, made[c.credential])] as const),
    ))
      sessions.set(c, session);
    await end();
    // The others keep theirs, but for a logout.
    const kept = new Map<Credential, { cookie?: string; csrf: string }>();
    for (const c of cases.filter((c) => c.web && !refusedLater.has(c.credential))) {
      if (c.kind === "logout") sessions.set(c, await webSession(t, c.credential, made[c.credential]));
      else {
        if (!kept.has(c.credential)) kept.set(c.credential, await webSession(t, c.credential, made[c.credential]));
        sessions.set(c, kept.get(c.credential)!);
      }
    }

    const wrong: string[] = [];
    for (const c of cases) {
      const project = c.missing ? MISSING : HERE;
      const samples = (c.web ? WEB_SAMPLES : API_SAMPLES) as Record<
        string,
        Record<string, (project: string) => Sample & { form?: Record<string, string> }>
      >;
      const sample = samples[c.kind]![c.method]!(project);
      let status: number;
      if (c.web) {
        const session = sessions.get(c)!;
        const signedOut = c.method === "POST" || c.kind === "live" ? 401 : 303;
        const body =
          sample.form && new URLSearchParams({ ...(c.kind === "login" ? {} : { csrf: session.csrf }), ...sample.form }).toString();
        const headers: Record<string, string> = {
          ...(session.cookie ? { cookie: session.cookie } : {}),
          ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        };
        status = (await fetch(t.url + sample.path, { method: c.method, headers, body, redirect: "manual" })).status;
        const want = expected(c.need, c.credential, c.missing, sample.ok, signedOut);
        if (status !== want) wrong.push(`web ${c.method} ${sample.path} as ${c.credential}: ${status}, not ${want}`);
      } else {
        const headers = { ...(sample.init?.headers as Record<string, string>), ...authorization(c.credential, made[c.credential]) };
        status = (await fetch(t.url + sample.path, { ...sample.init, method: c.method, headers })).status;
        const want = expected(c.need, c.credential, c.missing, sample.ok, 401);
        if (status !== want) wrong.push(`api ${c.method} ${sample.path} as ${c.credential}: ${status}, not ${want}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(cases.length).toBeGreaterThan(700);
  }, 120_000);

  it("answers 405 to a method a route does not list, whoever asks", async () => {
    const t = await testServer({ token: ADMIN, projects: [HERE] });
    for (const [kind, spec] of Object.entries(API_ROUTES)) {
      const method = ["DELETE", "PATCH", "PUT", "POST", "GET"].find((m) => !Object.hasOwn(spec.methods, m))!;
      const sample = Object.values(API_SAMPLES[kind as Route["kind"]])[0]!(HERE);
      const res = await fetch(t.url + sample.path, { method, headers: { authorization: `Bearer ${ADMIN}` } });
      expect(res.status, `${method} ${sample.path}`).toBe(405);
    }
  });
});
