// What a v1.2 reader sees of a project's past (docs/server.md#history): GET /files?version=N and
// GET /commits?since=N&limit=M[&path=P][&wait=ms].

import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { eventually, storeCases, type ProjectApi } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

interface Feed {
  version: number;
  commits: { version: number; time: string; source?: unknown; changes: unknown[] }[];
}

// A test that reads the feed, or waits on it, has a project of its own on a server the file shares
// (projectServer: its tests run one after another, so the server's long polls are the test's own);
// one that restarts or closes the server or sets an option starts its own (testServer).
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  async function feed(t: ProjectApi, query = ""): Promise<Feed> {
    const res = await t.request(`/commits${query}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Feed;
  }

  /** Four commits: v1 puts src/a.ts and README, v2 edits src/a.ts, v3 deletes README, v4 puts srcx. */
  async function history<T extends ProjectApi>(start: () => Promise<T>) {
    const t = await start();
    const [a1, a2, readme] = [await t.upload("a one"), await t.upload("a two"), await t.upload("read me")];
    const bodies = [
      {
        changes: [
          { op: "put", path: "src/a.ts", ...a1 },
          { op: "put", path: "README", ...readme, expect: null },
        ],
        source: { agent: "claude", sessionId: "s-1", host: "laptop" },
      },
      { changes: [{ op: "put", path: "src/a.ts", ...a2, expect: a1.sha256 }] },
      { changes: [{ op: "delete", path: "README", expect: readme.sha256 }], source: { agent: "codex" } },
      { changes: [{ op: "put", path: "srcx", ...a1 }] },
    ];
    for (const body of bodies) expect((await t.commit(body)).status).toBe(200);
    return { t, a1, a2, readme, bodies };
  }

  describe("GET /files?version=N", () => {
    it("lists the files as of each version, now and after a restart", async () => {
      const { t, a1, a2, readme } = await history(testServer);
      const expected = [
        [],
        [
          { path: "README", ...readme },
          { path: "src/a.ts", ...a1 },
        ],
        [
          { path: "README", ...readme },
          { path: "src/a.ts", ...a2 },
        ],
        [{ path: "src/a.ts", ...a2 }],
        [
          { path: "src/a.ts", ...a2 },
          { path: "srcx", ...a1 },
        ],
      ];
      for (const restarted of [false, true]) {
        if (restarted) await t.restart();
        for (const [version, files] of expected.entries()) {
          expect(await t.files(t.project, version), `version ${version}`).toEqual({ version, files });
        }
      }
      expect(await t.files()).toEqual({ version: 4, files: expected[4] });
    });

    it("answers a version past the head with 404 version_not_found, and a bad one with 400", async () => {
      const { t } = await history(projectServer);
      const past = await t.request("/files?version=5");
      expect({ status: past.status, ...((await past.json()) as object) }).toMatchObject({ status: 404, error: "version_not_found" });
      for (const bad of ["-1", "abc", "1.5", ""]) expect((await t.request(`/files?version=${bad}`)).status).toBe(400);
    });
  });

  describe("GET /commits", () => {
    it("answers every commit oldest first, each change as sent (with its expect), its time and source, and the head", async () => {
      const { t, bodies } = await history(projectServer);
      const before = new Date().toISOString();
      const { version, commits } = await feed(t);
      expect(version).toBe(4);
      expect(commits.map((c) => c.version)).toEqual([1, 2, 3, 4]);
      for (const [i, commit] of commits.entries()) {
        expect(commit.changes).toEqual(bodies[i]!.changes);
        expect(commit.source).toEqual(bodies[i]!.source);
        expect(commit.time <= before && !Number.isNaN(Date.parse(commit.time))).toBe(true);
      }
      expect(Object.hasOwn(commits[1]!, "source")).toBe(false);
    });

    it("pages with since and limit; the head is answered on every page", async () => {
      const { t } = await history(projectServer);
      expect((await feed(t, "?limit=2")).commits.map((c) => c.version)).toEqual([1, 2]);
      expect(await feed(t, "?since=2&limit=1")).toMatchObject({ version: 4, commits: [{ version: 3 }] });
      expect(await feed(t, "?since=4")).toMatchObject({ version: 4, commits: [] });
      expect(await feed(t, "?since=9")).toMatchObject({ version: 4, commits: [] });
    });

    it.each([
      ["README", [1, 3]],
      ["src", [1, 2]],
      ["src/a.ts", [1, 2]],
      ["srcx", [4]],
      ["sr", []],
      ["src/a.ts/x", []],
    ])("filters with path=%s: the file itself or anything under it", async (path, versions) => {
      const { t } = await history(projectServer);
      const answered = await feed(t, `?path=${encodeURIComponent(path)}`);
      expect(answered.version).toBe(4);
      expect(answered.commits.map((c) => c.version)).toEqual(versions);
    });

    it("applies the limit after the path filter", async () => {
      const { t } = await history(projectServer);
      expect((await feed(t, "?path=src&limit=1&since=1")).commits.map((c) => c.version)).toEqual([2]);
    });

    it.each([
      ["limit=0", "invalid_request"],
      ["limit=1001", "invalid_request"],
      ["limit=ten", "invalid_request"],
      ["since=-1", "invalid_request"],
      ["wait=60001", "invalid_request"],
      ["wait=-5", "invalid_request"],
      ["wait=1e3", "invalid_request"],
      ["path=..%2Fx", "invalid_path"],
      ["path=", "invalid_path"],
    ])("answers %s with 400 %s", async (query, error) => {
      const t = await projectServer();
      const res = await t.request(`/commits?${query}`);
      expect({ status: res.status, ...((await res.json()) as object) }).toMatchObject({ status: 400, error });
    });

    it("accepts the largest limit and wait", async () => {
      const { t } = await history(projectServer);
      expect((await feed(t, "?limit=1000&wait=60000")).commits).toHaveLength(4);
    });

    it("stops an answer before its changes pass maxJsonBytes, answering at least one commit", async () => {
      const t = await testServer({ maxJsonBytes: 4096 });
      const blob = await t.upload("x");
      const big = (name: string) => ({
        changes: Array.from({ length: 20 }, (_, i) => ({ op: "put", path: `${name}/${"p".repeat(90)}${i}`, ...blob })),
      });
      for (const name of ["a", "b", "c"]) expect((await t.commit(big(name))).status).toBe(200);
      const first = await feed(t);
      expect(first.commits.map((c) => c.version)).toEqual([1]);
      expect((await feed(t, "?since=1")).commits.map((c) => c.version)).toEqual([2]);
    });
  });

  describe("GET /commits?wait=ms", () => {
    it("answers as soon as a commit past since exists", async () => {
      const t = await projectServer();
      await t.write("a.txt", "one");
      const waiting = feed(t, "?since=1&wait=60000");
      await eventually(async () => t.waiting() === 1);
      await t.write("b.txt", "two");
      // Were it not woken, it would answer only after the test's own time limit.
      expect(await waiting).toMatchObject({ version: 2, commits: [{ version: 2 }] });
      expect(t.waiting()).toBe(0);
    });

    it("answers at once when commits past since exist already", async () => {
      const t = await projectServer();
      await t.write("a.txt", "one");
      expect(await feed(t, "?since=0&wait=60000")).toMatchObject({ version: 1, commits: [{ version: 1 }] });
    });

    it("is not woken by a commit to another project", async () => {
      const t = await projectServer();
      const other = `${t.project}-other`;
      await t.createProject(other);
      const waiting = feed(t, "?wait=1500");
      await eventually(async () => t.waiting() === 1);
      await t.write("a.txt", "elsewhere", other);
      expect(await waiting).toMatchObject({ version: 0, commits: [] });
    });

    it("answers empty with the head at the end of a wait with no commit", async () => {
      const t = await projectServer();
      await t.write("a.txt", "one");
      const started = performance.now();
      expect(await feed(t, "?since=1&wait=300")).toMatchObject({ version: 1, commits: [] });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      expect(t.waiting()).toBe(0);
    });

    it("answers a filtered wait as soon as any commit passes since, with the head to go on from", async () => {
      const t = await projectServer();
      const waiting = feed(t, "?path=src&wait=60000");
      await eventually(async () => t.waiting() === 1);
      await t.write("docs/x.md", "x");
      expect(await waiting).toMatchObject({ version: 1, commits: [] });
    });

    it("releases the waiter of a client that goes away", async () => {
      const t = await projectServer();
      const req = httpRequest(`${t.url}/api/projects/${t.project}/commits?wait=60000`);
      req.on("error", () => {});
      req.end();
      await eventually(async () => t.waiting() === 1);
      req.destroy();
      await eventually(async () => t.waiting() === 0);
      expect(await t.write("a.txt", "still serving")).toBe(1);
    });

    it("ends its waits at once when the server closes, answering what there is", async () => {
      const t = await testServer();
      const waiting = t.request("/commits?wait=60000");
      await eventually(async () => t.waiting() === 1);
      await t.close();
      const res = await waiting;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ version: 0, commits: [] });
    });

    it("wakes many waiters of one project with one commit", async () => {
      const t = await projectServer();
      const waits = Array.from({ length: 20 }, () => feed(t, "?wait=60000"));
      await eventually(async () => t.waiting() === 20);
      await t.commit({ changes: [{ op: "delete", path: "nothing" }] }, randomUUID());
      for (const answered of await Promise.all(waits)) expect(answered.commits.map((c) => c.version)).toEqual([1]);
    });
  });
});
