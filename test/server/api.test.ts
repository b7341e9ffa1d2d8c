import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { rawRequest, sendUntilAnswered, sha256, storeCases } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";
import { ZERO_CHAIN } from "../../src/api/chain.js";

const pg = usePgCluster();

// Each test has a project of its own on a server the file shares (projectServer); a test that looks
// at the whole server (its stored blobs, a restart, other options) starts its own (testServer).
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  const MISSING = sha256("never uploaded");

  async function expectError(res: Response, status: number, error: string): Promise<Record<string, unknown>> {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error, message: expect.any(String) });
    return body;
  }

  describe("GET /files", () => {
    it("answers a new project with version 0, no files and api 1.2", async () => {
      const t = await projectServer();
      const res = await t.request("/files");
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ version: 0, files: [], api: "1.2", chain: ZERO_CHAIN });
    });

    it("lists the committed files sorted by path, with sha256 and size", async () => {
      const t = await projectServer();
      const b = await t.upload("bee");
      const a = await t.upload("a!");
      const res = await t.commit({
        changes: [
          { op: "put", path: "src/b.ts", ...b },
          { op: "put", path: "README.md", ...a },
          { op: "put", path: "src/a.ts", ...a },
        ],
      });
      expect(res.status).toBe(200);
      expect(await t.files()).toEqual({
        version: 1,
        files: [
          { path: "README.md", ...a },
          { path: "src/a.ts", ...a },
          { path: "src/b.ts", ...b },
        ],
      });
    });

    it("keeps projects apart", async () => {
      const t = await projectServer();
      const second = `${t.project}-second`;
      await t.createProject(second);
      await t.write("a.txt", "one");
      expect(await t.files(second)).toEqual({ version: 0, files: [] });
      expect((await t.files()).version).toBe(1);
    });
  });

  describe("blobs", () => {
    // The blob store is the server's: bytes named after the test's project are new to it.
    it("answers HEAD with 404 for an absent blob and 200 once it is stored", async () => {
      const t = await projectServer();
      const content = `hello from ${t.project}`;
      const hash = sha256(content);
      expect((await t.request(`/blobs/${hash}`, { method: "HEAD" })).status).toBe(404);
      await t.upload(content);
      const res = await t.request(`/blobs/${hash}`, { method: "HEAD" });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(content)));
    });

    it("stores a new blob with 201 and answers 200 when the same bytes come again", async () => {
      const t = await projectServer();
      const content = `hello from ${t.project}`;
      const hash = sha256(content);
      const first = await t.request(`/blobs/${hash}`, { method: "PUT", body: content });
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ sha256: hash, size: Buffer.byteLength(content) });
      const again = await t.request(`/blobs/${hash}`, { method: "PUT", body: content });
      expect(again.status).toBe(200);
    });

    it("stores a blob content-addressed under blobs/ab/cdef… with no temp file left", async () => {
      const t = await testServer();
      const { sha256: hash } = await t.upload("layout");
      expect(await t.storedBlobs()).toEqual([hash]);
    });

    it("gives back exactly the stored bytes", async () => {
      const t = await projectServer();
      const bytes = new Uint8Array(4096).map((_, i) => (i * 7) % 256);
      const { sha256: hash } = await t.upload(bytes);
      const res = await t.request(`/blobs/${hash}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/octet-stream");
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    });

    it("stores and serves an empty blob", async () => {
      const t = await projectServer();
      const { sha256: hash } = await t.upload("");
      const res = await t.request(`/blobs/${hash}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("");
    });

    it("answers GET with 404 for an absent blob", async () => {
      const t = await projectServer();
      await expectError(await t.request(`/blobs/${MISSING}`), 404, "blob_not_found");
    });

    it("refuses a body whose SHA-256 differs from the URL with hash_mismatch and writes nothing", async () => {
      const t = await testServer();
      const res = await t.request(`/blobs/${sha256("expected")}`, { method: "PUT", body: "something else" });
      await expectError(res, 400, "hash_mismatch");
      expect(await t.storedBlobs()).toEqual([]);
      expect((await t.request(`/blobs/${sha256("expected")}`, { method: "HEAD" })).status).toBe(404);
    });

    it("refuses wrong bytes for a blob it already has, keeping the stored one", async () => {
      const t = await projectServer();
      const { sha256: hash } = await t.upload("right");
      await expectError(await t.request(`/blobs/${hash}`, { method: "PUT", body: "wrong" }), 400, "hash_mismatch");
      expect(await (await t.request(`/blobs/${hash}`)).text()).toBe("right");
    });

    it("keeps nothing from an upload the client cuts short, and goes on serving", async () => {
      const t = await testServer();
      const body = Buffer.alloc(64 * 1024, 7);
      const req = httpRequest(`${t.url}/api/projects/demo/blobs/${sha256(body)}`, {
        method: "PUT",
        headers: { expect: "100-continue", "content-length": String(body.length) },
      });
      req.on("error", () => {});
      // "100 Continue" means the server has the request in hand.
      await new Promise<void>((resolve) => req.once("continue", resolve));
      req.write(body.subarray(0, 1000));
      req.destroy();
      await t.restart(); // close() waits for the aborted upload to be cleaned up
      expect(await t.storedBlobs()).toEqual([]);
      expect((await t.files()).version).toBe(0);
    });

    it.each([
      ["uppercase", "A".repeat(64)],
      ["too short", "abc"],
      ["not hex", "g".repeat(64)],
    ])("refuses a blob address that is %s with invalid_request", async (_name, address) => {
      const t = await projectServer();
      await expectError(await t.request(`/blobs/${address}`), 400, "invalid_request");
      await expectError(await t.request(`/blobs/${address}`, { method: "PUT", body: "x" }), 400, "invalid_request");
      expect((await t.request(`/blobs/${address}`, { method: "HEAD" })).status).toBe(400);
    });
  });

  describe("body size limits", () => {
    const LIMIT = 1024;

    it("accepts a blob of exactly maxBlobBytes", async () => {
      const t = await testServer({ maxBlobBytes: LIMIT });
      await t.upload("x".repeat(LIMIT));
    });

    it("refuses a blob over maxBlobBytes with 413 too_large and keeps nothing", async () => {
      const t = await testServer({ maxBlobBytes: LIMIT });
      const body = "x".repeat(LIMIT + 1);
      await expectError(await t.request(`/blobs/${sha256(body)}`, { method: "PUT", body }), 413, "too_large");
      expect(await t.storedBlobs()).toEqual([]);
    });

    it("answers 413 to a declared Content-Length over the limit without waiting for the body", async () => {
      const t = await testServer({ maxBlobBytes: LIMIT });
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${t.url}/api/projects/demo/blobs/${MISSING}`, {
          method: "PUT",
          headers: { "content-length": String(10 * 1024 ** 3) },
        });
        req.on("response", (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        });
        req.on("error", reject);
        req.flushHeaders(); // headers only: the 10 GiB body never comes
      });
      expect(status).toBe(413);
    });

    it("stops a streamed (chunked) upload with 413 soon after the limit, without reading it all", async () => {
      const t = await testServer({ maxBlobBytes: 64 * 1024 });
      const chunk = Buffer.alloc(16 * 1024, 1);
      const cap = 256 * 1024 * 1024;
      const { outcome, written } = await sendUntilAnswered(`${t.url}/api/projects/demo/blobs/${MISSING}`, { method: "PUT" }, chunk, cap);
      expect(outcome).toBe(413);
      expect(written).toBeLessThan(cap);
      expect(await t.storedBlobs()).toEqual([]);
    });

    it("refuses a commit body over maxJsonBytes with 413 too_large", async () => {
      const t = await testServer({ maxJsonBytes: LIMIT });
      const body = JSON.stringify({ changes: [], source: { agent: "x".repeat(LIMIT) } });
      await expectError(await t.commit(body), 413, "too_large");
      expect((await t.files()).version).toBe(0);
    });

    it("refuses a commit body over the default 10 MiB with 413 too_large", async () => {
      const t = await projectServer();
      const body = JSON.stringify({ changes: [], source: { agent: "x".repeat(10 * 1024 * 1024) } });
      await expectError(await t.commit(body), 413, "too_large");
    });
  });

  describe("POST /commits", () => {
    it("applies puts and deletes and bumps the version by one per commit", async () => {
      const t = await projectServer();
      const one = await t.upload("one");
      const two = await t.upload("two");
      let res = await t.commit({
        changes: [
          { op: "put", path: "a.txt", ...one },
          { op: "put", path: "old.txt", ...one },
        ],
        source: { agent: "claude", sessionId: "s-1" },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ version: 1 });
      res = await t.commit({
        changes: [
          { op: "put", path: "a.txt", ...two },
          { op: "delete", path: "old.txt" },
        ],
      });
      expect(await res.json()).toMatchObject({ version: 2 });
      expect(await t.files()).toEqual({ version: 2, files: [{ path: "a.txt", ...two }] });
    });

    it("accepts deleting a path that does not exist", async () => {
      const t = await projectServer();
      const res = await t.commit({ changes: [{ op: "delete", path: "ghost.txt" }] });
      expect(await res.json()).toMatchObject({ version: 1 });
    });

    it("applies the changes of one commit in order, so the last one for a path wins", async () => {
      const t = await projectServer();
      const one = await t.upload("one");
      const res = await t.commit({
        changes: [
          { op: "put", path: "a.txt", ...one },
          { op: "delete", path: "a.txt" },
          { op: "put", path: "b.txt", ...one },
        ],
      });
      expect(res.status).toBe(200);
      expect((await t.files()).files.map((f) => f.path)).toEqual(["b.txt"]);
    });

    it("answers the first result again for a replayed Idempotency-Key and applies nothing twice", async () => {
      const t = await projectServer();
      const blob = await t.upload("content");
      const key = randomUUID();
      const body = { changes: [{ op: "put", path: "a.txt", ...blob }] };
      const first = await t.commit(body, key);
      expect(await first.json()).toMatchObject({ version: 1 });

      const again = await t.commit(body, key);
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ version: 1 });
      expect(again.headers.get("idempotent-replayed")).toBe("true");

      // A different body under the same key is refused: it would be lost silently otherwise.
      const other = await t.commit({ changes: [{ op: "delete", path: "a.txt" }] }, key);
      await expectError(other, 422, "idempotency_key_reused");
      expect(await t.files()).toEqual({ version: 1, files: [{ path: "a.txt", ...blob }] });
    });

    it("answers each of several concurrent requests with the same key with the single version", async () => {
      const t = await projectServer();
      const blob = await t.upload("content");
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => t.commit({ changes: [{ op: "put", path: "a.txt", ...blob }] }, key)),
      );
      for (const res of answers) expect(await res.json()).toMatchObject({ version: 1 });
      expect((await t.files()).version).toBe(1);
    });

    it("keeps Idempotency-Keys per project", async () => {
      const t = await projectServer();
      const two = `${t.project}-two`;
      await t.createProject(two);
      const key = randomUUID();
      expect(await (await t.commit({ changes: [] }, key)).json()).toMatchObject({ version: 1 });
      expect(await (await t.commit({ changes: [] }, key, two)).json()).toMatchObject({ version: 1 });
      expect((await t.files(two)).version).toBe(1);
    });

    it("answers 422 missing_blobs listing each absent blob once, then accepts the same commit after the upload", async () => {
      const t = await projectServer();
      const present = await t.upload("present");
      const absentA = { sha256: sha256("absent a"), size: 8 };
      const absentB = { sha256: sha256("absent b"), size: 8 };
      const key = randomUUID();
      const body = {
        changes: [
          { op: "put", path: "p.txt", ...present },
          { op: "put", path: "a.txt", ...absentA },
          { op: "put", path: "a-copy.txt", ...absentA },
          { op: "put", path: "b.txt", ...absentB },
        ],
      };
      const refused = await expectError(await t.commit(body, key), 422, "missing_blobs");
      expect(refused.missing).toEqual([absentA.sha256, absentB.sha256]);
      expect(await t.files()).toEqual({ version: 0, files: [] });

      await t.upload("absent a");
      await t.upload("absent b");
      const accepted = await t.commit(body, key);
      expect(await accepted.json()).toMatchObject({ version: 1 });
      expect((await t.files()).files).toHaveLength(4);
    });

    it("refuses a put whose size differs from the blob's actual size with invalid_request", async () => {
      const t = await projectServer();
      const blob = await t.upload("12345");
      const res = await t.commit({ changes: [{ op: "put", path: "a.txt", sha256: blob.sha256, size: 4 }] });
      const body = await expectError(res, 400, "invalid_request");
      expect(body.path).toBe("a.txt");
      expect((await t.files()).version).toBe(0);
    });

    it("refuses a commit without an Idempotency-Key header", async () => {
      const t = await projectServer();
      const res = await t.request("/commits", { method: "POST", body: JSON.stringify({ changes: [] }) });
      await expectError(res, 400, "invalid_request");
    });

    it("answers 400 invalid_json for a malformed body", async () => {
      const t = await projectServer();
      await expectError(await t.commit('{"changes": ['), 400, "invalid_json");
      await expectError(await t.commit(""), 400, "invalid_json");
    });

    it("answers 400 invalid_json for a body that is not UTF-8", async () => {
      const t = await projectServer();
      const res = await t.request("/commits", {
        method: "POST",
        headers: { "idempotency-key": randomUUID() },
        body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), // {"\xff":1}
      });
      await expectError(res, 400, "invalid_json");
    });

    it.each([
      ["changes is not an array", { changes: "a.txt" }],
      ["op is neither put nor delete", { changes: [{ op: "rename", path: "a" }] }],
      ["sha256 is not 64 lowercase hex", { changes: [{ op: "put", path: "a", sha256: MISSING.toUpperCase(), size: 1 }] }],
      ["size is negative", { changes: [{ op: "put", path: "a", sha256: MISSING, size: -1 }] }],
      ["size is not an integer", { changes: [{ op: "put", path: "a", sha256: MISSING, size: 0.5 }] }],
      ["a put has no sha256", { changes: [{ op: "put", path: "a", size: 1 }] }],
    ])("answers 400 invalid_request when %s", async (_name, body) => {
      const t = await projectServer();
      await expectError(await t.commit(body), 400, "invalid_request");
      expect((await t.files()).version).toBe(0);
    });

    it.each([
      ["an empty path", ""],
      ["an absolute path", "/etc/passwd"],
      ["an empty segment", "a//b"],
      ["a '.' segment", "a/./b"],
      ["a '..' segment", "../escape"],
      ["a backslash", "a\\b"],
      ["a NUL byte", "a\0b"],
      ["a lone surrogate (not UTF-8)", "a\ud800b"],
      ["more than 1024 bytes", "é".repeat(513)],
    ])("answers 400 invalid_path with the path for %s, applying nothing", async (_name, path) => {
      const t = await projectServer();
      const blob = await t.upload("x");
      const res = await t.commit({
        changes: [
          { op: "put", path: "fine.txt", ...blob },
          { op: "put", path, ...blob },
        ],
      });
      const body = await expectError(res, 400, "invalid_path");
      expect(body.path).toBe(path);
      expect(await t.files()).toEqual({ version: 0, files: [] });
    });

    it("serializes concurrent commits to one project: versions 1..N, each exactly once", async () => {
      const t = await projectServer();
      const blob = await t.upload("x");
      const n = 25;
      const answers = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const res = await t.commit({ changes: [{ op: "put", path: `f${i}.txt`, ...blob }] });
          return ((await res.json()) as { version: number }).version;
        }),
      );
      expect([...answers].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      const files = await t.files();
      expect(files.version).toBe(n);
      expect(files.files).toHaveLength(n);
    });
  });

  describe("routing", () => {
    // Outside /api/ is the web view's (docs/web-view.md): test/server/web/.
    it.each([
      "/api",
      "/api/projects/demo",
      "/api/projects/demo/files/extra",
      "/api/projects/demo/sessions/s1",
      "/api/projects/demo/files/",
      "/api/other/demo/files",
    ])("answers 404 not_found for %s", async (path) => {
      const t = await projectServer();
      await expectError(await fetch(`${t.url}${path.replace("/demo", `/${t.project}`)}`), 404, "not_found");
    });

    it.each([
      ["POST", "/files", "GET, HEAD"],
      ["GET", "/blobs", "POST"],
      ["GET", "/blobs/get", "POST"],
      ["POST", "/sessions/s1/events", "GET, HEAD, PUT"],
      ["DELETE", `/blobs/${MISSING}`, "GET, HEAD, PUT"],
      ["POST", `/blobs/${MISSING}`, "GET, HEAD, PUT"],
      ["PUT", "/commits", "GET, POST"],
      ["DELETE", "/commits", "GET, POST"],
    ])("answers %s %s with 405 and Allow: %s", async (method, path, allow) => {
      const t = await projectServer();
      const res = await t.request(path, { method });
      await expectError(res, 405, "method_not_allowed");
      expect(res.headers.get("allow")).toBe(allow);
    });

    it.each(["..", ".", "%2e%2e", "a%2Fb", "a%5Cb", "a%01b", "a%7Fb", "a%C2%85b", "x".repeat(256), "%C3%A9".repeat(128)])(
      "refuses the project id %j with 400 invalid_project_id",
      async (id) => {
        const t = await projectServer();
        const res = await rawRequest(t.url, "GET", `/api/projects/${id}/files`);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body)).toMatchObject({ error: "invalid_project_id", message: expect.any(String) });
      },
    );

    it("refuses malformed percent-encoding with 400 invalid_request", async () => {
      const t = await projectServer();
      await expectError(await t.request("/files", {}, "%E0%A4%A"), 400, "invalid_request");
    });

    it("ignores a query string", async () => {
      const t = await projectServer();
      expect((await t.request("/files?x=1")).status).toBe(200);
    });
  });
});
