// POST /commits in v1.2 (docs/server.md#conditional-commits): expectations, the order of the checks, Idempotency-Keys.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256, storeCases, type ProjectApi } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

// Each test has a project of its own on a server the file shares (projectServer); a test that
// restarts the server or sets an option starts its own (testServer).
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  async function answer(res: Response): Promise<Record<string, unknown>> {
    return { status: res.status, ...((await res.json()) as Record<string, unknown>) };
  }

  /** A project at version 2 holding keep.txt = "keep" and edit.txt = "edit v2". */
  async function seeded() {
    const t = await projectServer();
    await t.write("edit.txt", "edit v1");
    const keep = await t.upload("keep");
    const edit = await t.upload("edit v2");
    await t.commit({
      changes: [
        { op: "put", path: "keep.txt", ...keep },
        { op: "put", path: "edit.txt", ...edit },
      ],
    });
    const fresh = await t.upload("fresh");
    return { t, keep, edit, fresh, before: await t.files() };
  }

  async function expectNothingApplied(t: ProjectApi, before: Awaited<ReturnType<ProjectApi["files"]>>): Promise<void> {
    expect(await t.files()).toEqual(before);
  }

  describe("expect", () => {
    it.each([
      ["a put of a new path expecting it absent", (b: Blobs) => ({ op: "put", path: "new.txt", ...b.fresh, expect: null })],
      ["a put over a path expecting its hash", (b: Blobs) => ({ op: "put", path: "edit.txt", ...b.fresh, expect: b.edit.sha256 })],
      ["a delete expecting the path's hash", (b: Blobs) => ({ op: "delete", path: "edit.txt", expect: b.edit.sha256 })],
      ["a delete of an absent path expecting it absent", () => ({ op: "delete", path: "ghost.txt", expect: null })],
    ])("applies %s", async (_name, change) => {
      const { t, ...blobs } = await seeded();
      expect(await answer(await t.commit({ changes: [change(blobs)] }))).toMatchObject({ status: 200, version: 3 });
    });

    it.each([
      ["a put expecting a present path absent", (b: Blobs) => ({ op: "put", path: "edit.txt", ...b.fresh, expect: null }), "edit"],
      ["a put expecting an older hash", (b: Blobs) => ({ op: "put", path: "edit.txt", ...b.fresh, expect: sha256("edit v1") }), "edit"],
      [
        "a put expecting a hash at an absent path",
        (b: Blobs) => ({ op: "put", path: "new.txt", ...b.fresh, expect: b.keep.sha256 }),
        "absent",
      ],
      ["a delete expecting a present path absent", () => ({ op: "delete", path: "edit.txt", expect: null }), "edit"],
      ["a delete expecting another hash", (b: Blobs) => ({ op: "delete", path: "edit.txt", expect: b.keep.sha256 }), "edit"],
      ["a delete expecting a hash at an absent path", (b: Blobs) => ({ op: "delete", path: "ghost.txt", expect: b.keep.sha256 }), "absent"],
    ])("refuses %s with 409 conflict naming what the path holds, applying nothing", async (_name, change, holds) => {
      const { t, before, ...blobs } = await seeded();
      const made = change(blobs) as { path: string };
      const now = holds === "edit" ? { sha256: blobs.edit.sha256, size: blobs.edit.size } : { sha256: null, size: null };
      expect(await answer(await t.commit({ changes: [made] }))).toEqual({
        status: 409,
        error: "conflict",
        message: expect.any(String),
        conflicts: [{ path: made.path, ...now }],
        version: 2,
      });
      await expectNothingApplied(t, before);
    });

    it("refuses a mixed batch where some paths fail: every failed path, only those, and nothing applied", async () => {
      const { t, before, keep, edit, fresh } = await seeded();
      const res = await t.commit({
        changes: [
          { op: "put", path: "new.txt", ...fresh, expect: null },
          { op: "put", path: "keep.txt", ...fresh, expect: sha256("not it") },
          { op: "put", path: "no-expect.txt", ...fresh },
          { op: "delete", path: "edit.txt", expect: edit.sha256 },
          { op: "delete", path: "ghost.txt", expect: keep.sha256 },
        ],
      });
      expect(await answer(res)).toMatchObject({
        status: 409,
        conflicts: [
          { path: "keep.txt", sha256: keep.sha256, size: keep.size },
          { path: "ghost.txt", sha256: null, size: null },
        ],
        version: 2,
      });
      await expectNothingApplied(t, before);
    });

    it("lets exactly one of many concurrent commits expecting the same path absent through", async () => {
      const t = await projectServer();
      const blobs = await Promise.all(Array.from({ length: 12 }, (_, i) => t.upload(`writer ${i}`)));
      const answers = await Promise.all(
        blobs.map((blob) => t.commit({ changes: [{ op: "put", path: "claimed.txt", ...blob, expect: null }] })),
      );
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(11).fill(409)]);
      const winner = blobs[answers.findIndex((res) => res.status === 200)]!;
      expect(await t.files()).toEqual({ version: 1, files: [{ path: "claimed.txt", ...winner }] });
    });
  });

  describe("a file and a directory under one name (v1.3)", () => {
    it("refuses a file under a file, and a file over a directory, across versions: 409 conflict naming both paths, nothing applied", async () => {
      const { t, fresh, before } = await seeded();
      const under = await answer(await t.commit({ changes: [{ op: "put", path: "keep.txt/y", ...fresh, expect: null }] }));
      expect(under).toMatchObject({
        status: 409,
        error: "conflict",
        version: 2,
        conflicts: [{ path: "keep.txt/y", sha256: null, size: null, clash: "keep.txt" }],
      });
      expect(under.message).toContain("keep.txt/y and keep.txt");
      await t.write("dir/a.txt", "a");
      const over = await answer(await t.commit({ changes: [{ op: "put", path: "dir", ...fresh }] }));
      expect(over).toMatchObject({ status: 409, conflicts: [{ path: "dir", sha256: null, clash: "dir/a.txt" }] });
      expect((await t.files()).files.map((f) => f.path)).toEqual([...before.files.map((f) => f.path), "dir/a.txt"].sort());
    });

    it("refuses both in one commit, and takes a file replaced by a directory in one commit", async () => {
      const { t, fresh, keep } = await seeded();
      const both = await answer(
        await t.commit({
          changes: [
            { op: "put", path: "x", ...fresh },
            { op: "put", path: "x/y", ...fresh },
          ],
        }),
      );
      expect(both).toMatchObject({
        status: 409,
        conflicts: [
          { path: "x", clash: "x/y" },
          { path: "x/y", clash: "x" },
        ],
      });
      const replaced = await t.commit({
        changes: [
          { op: "delete", path: "keep.txt", expect: keep.sha256 },
          { op: "put", path: "keep.txt/y", ...fresh, expect: null },
        ],
      });
      expect(replaced.status).toBe(200);
    });
  });

  describe("the order of the checks: key replay, 400s, 409 conflict, 422 missing_blobs", () => {
    it("answers a replayed key with its first version even though its expectations no longer hold", async () => {
      const t = await projectServer();
      const blob = await t.upload("first");
      const key = randomUUID();
      const body = { changes: [{ op: "put", path: "a.txt", ...blob, expect: null }] };
      expect(await answer(await t.commit(body, key))).toMatchObject({ status: 200, version: 1 });
      const again = await t.commit(body, key);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await answer(again)).toMatchObject({ status: 200, version: 1 });
    });

    it("answers 400 before 409: a wrong size, or a bad path, next to a conflict", async () => {
      const { t, before, fresh } = await seeded();
      const conflict = { op: "put", path: "edit.txt", ...fresh, expect: null };
      const wrongSize = { op: "put", path: "x.txt", sha256: fresh.sha256, size: fresh.size + 1 };
      expect(await answer(await t.commit({ changes: [conflict, wrongSize] }))).toMatchObject({ status: 400, path: "x.txt" });
      const badPath = { op: "delete", path: "../x" };
      expect(await answer(await t.commit({ changes: [conflict, badPath] }))).toMatchObject({ status: 400, error: "invalid_path" });
      await expectNothingApplied(t, before);
    });

    it("answers 409 before 422: a conflict next to a blob never uploaded", async () => {
      const { t, before, fresh } = await seeded();
      const missing = { op: "put", path: "m.txt", sha256: sha256("never uploaded"), size: 14 };
      const conflict = { op: "put", path: "edit.txt", ...fresh, expect: null };
      expect(await answer(await t.commit({ changes: [missing, conflict] }))).toMatchObject({ status: 409, error: "conflict" });
      expect(await answer(await t.commit({ changes: [missing] }))).toMatchObject({ status: 422, error: "missing_blobs" });
      await expectNothingApplied(t, before);
    });
  });

  describe("Idempotency-Key", () => {
    it("refuses a key an applied commit bound, sent with another body, with 422 idempotency_key_reused", async () => {
      const t = await projectServer();
      const blob = await t.upload("x");
      const key = randomUUID();
      await t.commit({ changes: [{ op: "put", path: "a.txt", ...blob }] }, key);
      for (const other of [
        { changes: [{ op: "put", path: "b.txt", ...blob }] },
        { changes: [{ op: "put", path: "a.txt", ...blob, expect: null }] },
        { changes: [{ op: "put", path: "a.txt", ...blob }], source: { agent: "claude" } },
      ]) {
        expect(await answer(await t.commit(other, key))).toMatchObject({ status: 422, error: "idempotency_key_reused" });
      }
      expect((await t.files()).files.map((f) => f.path)).toEqual(["a.txt"]);
    });

    it("takes the same JSON with its keys in another order (and unknown fields) for the same body", async () => {
      const t = await projectServer();
      const blob = await t.upload("x");
      const key = randomUUID();
      const first = `{"changes":[{"op":"put","path":"a.txt","sha256":"${blob.sha256}","size":${blob.size},"expect":null}],"source":{"agent":"a","sessionId":"s"}}`;
      const reordered = `{"source":{"sessionId":"s","agent":"a"},"note":"ignored","changes":[{"expect":null,"size":${blob.size},"sha256":"${blob.sha256}","path":"a.txt","op":"put"}]}`;
      expect(await answer(await t.commit(first, key))).toMatchObject({ status: 200, version: 1 });
      expect(await answer(await t.commit(reordered, key))).toMatchObject({ status: 200, version: 1 });
    });

    it.each([
      ["409 conflict", "conflict"],
      ["422 missing_blobs", "missing"],
      ["400 size mismatch", "size"],
    ])("leaves a key free after a %s: it may come again with another body", async (_name, refusal) => {
      const { t, edit, fresh } = await seeded();
      const key = randomUUID();
      const refused = {
        conflict: { op: "put", path: "edit.txt", ...fresh, expect: null },
        missing: { op: "put", path: "m.txt", sha256: sha256("never uploaded"), size: 14 },
        size: { op: "put", path: "m.txt", sha256: fresh.sha256, size: 99 },
      }[refusal];
      expect((await t.commit({ changes: [refused] }, key)).status).toBeGreaterThanOrEqual(400);
      const other = { changes: [{ op: "put", path: "edit.txt", ...fresh, expect: edit.sha256 }] };
      expect(await answer(await t.commit(other, key))).toMatchObject({ status: 200, version: 3 });
      expect(await answer(await t.commit(other, key))).toMatchObject({ status: 200, version: 3 });
    });

    it("remembers which body each key was bound to across a restart", async () => {
      const t = await testServer();
      const blob = await t.upload("x");
      const key = randomUUID();
      const body = { changes: [{ op: "put", path: "a.txt", ...blob, expect: null }], source: { agent: "claude", sessionId: "s-1" } };
      await t.commit(body, key);
      await t.restart();
      expect(await answer(await t.commit(body, key))).toMatchObject({ status: 200, version: 1 });
      expect(await answer(await t.commit({ ...body, source: { agent: "codex" } }, key))).toMatchObject({ status: 422 });
    });
  });
});

type Blobs = Record<"keep" | "edit" | "fresh", { sha256: string; size: number }>;
