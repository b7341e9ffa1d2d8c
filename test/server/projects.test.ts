// Projects in v1.2 (docs/server.md#projects): created only through POST /api/projects, listed by GET,
// unknown ones refused on every route; ids of 1-255 bytes.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rawRequest, sha256, storeCases } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

// A test that restarts the server, or looks at its whole list of projects, starts a server of its
// own (testServer). The others share the file's (projectServer) and see what their requests created
// by the list before and after: the file's tests run one after another.
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  async function answer(res: Response): Promise<Record<string, unknown>> {
    return { status: res.status, ...((await res.json()) as Record<string, unknown>) };
  }

  function post(url: string, body: string): Promise<Response> {
    return fetch(`${url}/api/projects`, { method: "POST", headers: { "content-type": "application/json" }, body });
  }

  async function list(url: string): Promise<{ projects: { id: string; version: number; files: number; updated: string }[] }> {
    const res = await fetch(`${url}/api/projects`);
    expect(res.status).toBe(200);
    return (await res.json()) as never;
  }

  async function listedIds(url: string): Promise<string[]> {
    return (await list(url)).projects.map((p) => p.id);
  }

  /** The ids listed now that were not in `before` (twice if listed twice). */
  async function createdSince(url: string, before: string[]): Promise<string[]> {
    return (await listedIds(url)).filter((id) => !before.includes(id));
  }

  describe("POST /api/projects", () => {
    it("creates a project at version 0 with 201, then answers 409 exists", async () => {
      const t = await projectServer();
      const id = `${t.project}-fresh`;
      const created = await answer(await post(t.url, JSON.stringify({ id })));
      expect(created).toEqual({ status: 201, id, version: 0, files: 0, updated: expect.stringMatching(ISO) });
      expect(await t.files(id)).toEqual({ version: 0, files: [] });
      expect(await answer(await post(t.url, JSON.stringify({ id })))).toMatchObject({ status: 409, error: "exists" });
    });

    it("creates a project once when several ask at the same time", async () => {
      const t = await projectServer();
      const id = `${t.project}-race`;
      const before = await listedIds(t.url);
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(t.url, JSON.stringify({ id }))));
      expect(answers.map((res) => res.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      expect(await createdSince(t.url, before)).toEqual([id]);
    });

    it.each([
      ["a body that is not JSON", "{", "invalid_json"],
      ["a body without an id", "{}", "invalid_request"],
      ["an id that is not a string", '{"id": 7}', "invalid_request"],
      ["an id with a slash", '{"id": "a/b"}', "invalid_project_id"],
      ["an id of 256 bytes", JSON.stringify({ id: "x".repeat(256) }), "invalid_project_id"],
      ["an id with a control character", '{"id": "a\\u0007b"}', "invalid_project_id"],
      ["the id '..'", '{"id": ".."}', "invalid_project_id"],
    ])("refuses %s with 400", async (_name, body, error) => {
      const t = await projectServer();
      const before = await listedIds(t.url);
      expect(await answer(await post(t.url, body))).toMatchObject({ status: 400, error });
      expect(await createdSince(t.url, before)).toEqual([]);
    });
  });

  describe("GET /api/projects", () => {
    it("lists every project sorted by id, with its version, file count and last change", async () => {
      const t = await testServer({ projects: ["zeta", "alpha"] });
      const [before] = (await list(t.url)).projects;
      await t.write("a.txt", "one", "zeta");
      await t.write("b.txt", "two", "zeta");
      await t.commit({ changes: [{ op: "delete", path: "a.txt" }] }, randomUUID(), "zeta");
      const { projects } = await list(t.url);
      expect(projects).toEqual([
        { id: "alpha", version: 0, files: 0, updated: before!.updated },
        { id: "zeta", version: 3, files: 1, updated: expect.stringMatching(ISO) },
      ]);
      expect(projects[1]!.updated >= before!.updated).toBe(true);
      await t.restart();
      expect((await list(t.url)).projects).toEqual(projects);
    });
  });

  describe("a project never created", () => {
    const MISSING = sha256("x");
    it.each([
      ["GET", "/files"],
      ["GET", "/files?version=0"],
      ["GET", "/commits"],
      ["GET", "/commits?wait=60000"],
      ["POST", "/commits"],
      ["HEAD", `/blobs/${MISSING}`],
      ["GET", `/blobs/${MISSING}`],
      ["PUT", `/blobs/${MISSING}`],
      ["POST", "/blobs"],
      ["POST", "/blobs/get"],
      ["GET", "/sessions"],
      ["GET", "/sessions/s-1/events"],
      ["PUT", "/sessions/s-1/events?offset=0"],
    ])("is answered 404 project_not_found on %s %s, and stays unknown", async (method, path) => {
      const t = await projectServer();
      const before = await listedIds(t.url);
      const body = method === "PUT" || method === "POST" ? "x" : undefined;
      const res = await t.request(path, { method, body, headers: { "idempotency-key": randomUUID() } }, "never-created");
      expect(res.status).toBe(404);
      if (method !== "HEAD")
        expect(await res.json()).toMatchObject({ error: "project_not_found", message: expect.stringContaining("never-created") });
      expect(await createdSince(t.url, before)).toEqual([]);
    });
  });

  describe("project ids at the limits of docs/api.md", () => {
    const ids = [
      ["255 ASCII bytes", "p".repeat(255)],
      ["255 bytes of 3-byte characters", "日".repeat(85)],
      ["spaces, punctuation and a name that is a hash", "Team A: Q3 (draft) #2 ~" + "0".repeat(64)],
      ["a leading dot", ".config"],
    ];

    it.each(ids)("serves an id of %s on every route, and after a restart", async (_name, id) => {
      const t = await testServer({ projects: [] });
      await t.createProject(id);
      const project = encodeURIComponent(id);
      expect(await t.write("a.txt", "one", project)).toBe(1);
      expect((await t.request(`/blobs/${sha256("one")}`, {}, project)).status).toBe(200);
      const events = await t.request("/sessions/s-1/events?offset=0", { method: "PUT", body: "{}\n" }, project);
      expect(events.status).toBe(200);
      await t.restart();
      expect((await t.files(project)).files.map((f) => f.path)).toEqual(["a.txt"]);
      expect(await (await t.request("/sessions", {}, project)).json()).toEqual({
        sessions: [{ id: "s-1", length: 3, updated: expect.any(String) }],
      });
      expect(await listedIds(t.url)).toEqual([id]);
    });

    it("keeps ids that differ only past what a file name could hold apart", async () => {
      const t = await testServer({ projects: [] });
      const [a, b] = ["x".repeat(250) + "a b 1", "x".repeat(250) + "a b 2"];
      await t.createProject(a);
      await t.createProject(b);
      await t.write("only-in-a.txt", "a", encodeURIComponent(a));
      await t.restart();
      expect((await t.files(encodeURIComponent(a))).version).toBe(1);
      expect((await t.files(encodeURIComponent(b))).version).toBe(0);
    });

    it.each([
      ["256 bytes", "q".repeat(256)],
      ["an encoded slash", "a%2Fb"],
      ["an encoded backslash", "a%5Cb"],
      ["an encoded NUL", "a%00b"],
      ["an encoded C1 control", "a%C2%9Bb"],
      ["an encoded '..'", "%2E%2E"],
    ])("refuses an id of %s in the URL with 400 invalid_project_id", async (_name, id) => {
      const t = await projectServer();
      const res = await rawRequest(t.url, "GET", `/api/projects/${id}/files`);
      expect({ status: res.status, ...JSON.parse(res.body) }).toMatchObject({ status: 400, error: "invalid_project_id" });
    });
  });
});
