import { describe, expect, it } from "vitest";
import { rawRequest, storeCases, type ProjectApi } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

// Each test has a project of its own on a server the file shares (projectServer); a test that
// restarts the server or sets an option starts its own (testServer).
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  function putEvents(t: ProjectApi, offset: number | string, body: string | Uint8Array, session = "s-1"): Promise<Response> {
    return t.request(`/sessions/${session}/events?offset=${offset}`, {
      method: "PUT",
      headers: { "content-type": "application/x-ndjson" },
      body,
    });
  }

  async function transcript(t: ProjectApi, session = "s-1"): Promise<Buffer> {
    const res = await t.request(`/sessions/${session}/events`);
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  async function answer(res: Response): Promise<Record<string, unknown>> {
    return { status: res.status, ...((await res.json()) as Record<string, unknown>) };
  }

  describe("session transcripts", () => {
    it("appends at the current length and gives back the exact bytes", async () => {
      const t = await projectServer();
      const first = Buffer.from('{"type":"system"}\n');
      const second = Buffer.from([0xff, 0x00, 0x0d, 0x0a, 0xe9]);
      expect(await answer(await putEvents(t, 0, first))).toEqual({ status: 200, length: first.length });
      expect(await answer(await putEvents(t, first.length, second))).toEqual({
        status: 200,
        length: first.length + second.length,
      });
      expect(await transcript(t)).toEqual(Buffer.concat([first, second]));
    });

    it("appends nothing twice when the same bytes come again at the same offset", async () => {
      const t = await projectServer();
      await putEvents(t, 0, "one\n");
      await putEvents(t, 4, "two\n");
      expect(await answer(await putEvents(t, 4, "two\n"))).toEqual({ status: 200, length: 8 });
      expect(await answer(await putEvents(t, 0, "one\n"))).toEqual({ status: 200, length: 8 });
      expect((await transcript(t)).toString()).toBe("one\ntwo\n");
    });

    it("appends only the new tail of a retried batch that grew", async () => {
      const t = await projectServer();
      await putEvents(t, 0, "one\n");
      expect(await answer(await putEvents(t, 0, "one\ntwo\n"))).toEqual({ status: 200, length: 8 });
      expect((await transcript(t)).toString()).toBe("one\ntwo\n");
    });

    it.each([
      ["past the end", 9, "x"],
      ["inside, with other bytes", 2, "XX"],
    ])("answers an offset %s with 409 offset_mismatch and the current length", async (_name, offset, body) => {
      const t = await projectServer();
      await putEvents(t, 0, "one\ntwo\n");
      expect(await answer(await putEvents(t, offset, body))).toMatchObject({ status: 409, error: "offset_mismatch", length: 8 });
      expect((await transcript(t)).toString()).toBe("one\ntwo\n");
    });

    it("answers a first append past offset 0 with 409 and length 0, creating nothing", async () => {
      const t = await projectServer();
      expect(await answer(await putEvents(t, 5, "late"))).toMatchObject({ status: 409, error: "offset_mismatch", length: 0 });
      expect((await t.request("/sessions/s-1/events")).status).toBe(404);
    });

    it("refuses a body over the limit with 413 too_large", async () => {
      const t = await testServer({ maxEventsBytes: 100 });
      expect(await answer(await putEvents(t, 0, "x".repeat(101)))).toMatchObject({ status: 413, error: "too_large" });
      expect(await answer(await putEvents(t, 0, "x".repeat(100)))).toEqual({ status: 200, length: 100 });
    });

    it.each([
      ["missing", ""],
      ["negative", "-1"],
      ["not a number", "abc"],
    ])("refuses an offset that is %s with invalid_request", async (_name, offset) => {
      const t = await projectServer();
      expect(await answer(await putEvents(t, offset, "x"))).toMatchObject({ status: 400, error: "invalid_request" });
    });

    it.each(["a%2Fb", "a%20b", "%2E%2E"])("refuses the session id %s with 400", async (session) => {
      const t = await projectServer();
      const res = await rawRequest(t.url, "PUT", `/api/projects/${t.project}/sessions/${session}/events?offset=0`);
      expect(res.status).toBe(400);
    });

    it("answers 404 for a session it has no transcript of", async () => {
      const t = await projectServer();
      expect(await answer(await t.request("/sessions/nobody/events"))).toMatchObject({ status: 404 });
    });

    it("lists the sessions of a project with their lengths, and keeps them across a restart", async () => {
      const t = await testServer();
      await putEvents(t, 0, "abc", "s-b");
      await putEvents(t, 0, "a", "s-a");
      await putEvents(t, 0, "other", "s-c").then(() => {});
      await t.createProject("other-project");
      await t.request("/sessions/s-x/events?offset=0", { method: "PUT", body: "elsewhere" }, "other-project");
      await t.restart();
      const res = await t.request("/sessions");
      expect(await res.json()).toEqual({
        sessions: [
          { id: "s-a", length: 1, updated: expect.any(String) },
          { id: "s-b", length: 3, updated: expect.any(String) },
          { id: "s-c", length: 5, updated: expect.any(String) },
        ],
      });
      expect((await transcript(t, "s-b")).toString()).toBe("abc");
    });

    it("lists when each session's transcript was last appended to (updated, an ISO time)", async () => {
      const t = await projectServer();
      const before = Date.now();
      await putEvents(t, 0, "abc", "s-u");
      const after = Date.now();
      const [listed] = ((await (await t.request("/sessions")).json()) as { sessions: { id: string; updated: string }[] }).sessions;
      expect(listed!.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // A file's time comes from the kernel's coarse clock: a few ms behind Date.now() at most.
      expect(Date.parse(listed!.updated)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(listed!.updated)).toBeLessThanOrEqual(after + 1000);
    });

    it("lists no sessions for a project without any", async () => {
      const t = await projectServer();
      expect(await (await t.request("/sessions")).json()).toEqual({ sessions: [] });
    });
  });

  describe("probes and latency", () => {
    it("answers /healthz and /readyz without a token", async () => {
      const t = await testServer({ token: "secret" });
      for (const probe of ["/healthz", "/readyz"]) {
        const res = await fetch(`${t.url}${probe}`);
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ status: expect.any(String) });
      }
    });

    it("delays every answer by latencyMs", async () => {
      const t = await testServer({ latencyMs: 150 });
      const started = performance.now();
      await t.files();
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    });
  });
});
