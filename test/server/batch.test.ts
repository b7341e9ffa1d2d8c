import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { sendUntilAnswered, sha256, storeCases, type ProjectApi } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

// Each test has a project of its own on a server the file shares (projectServer). The blob store is
// the server's: a test that needs a blob absent which another test stores (""), or that sets a
// limit, starts a server of its own (testServer).
describe.each(storeCases(pg))("%s store", (_store, testServer, projectServer) => {
  function formOf(blobs: (string | Uint8Array)[], name = (bytes: Buffer) => sha256(bytes)): FormData {
    const form = new FormData();
    for (const blob of blobs) {
      const bytes = Buffer.from(blob);
      form.append(name(bytes), new Blob([bytes]));
    }
    return form;
  }

  /** The multipart body and its Content-Type, as the platform builds them. */
  async function encode(form: FormData): Promise<{ body: Buffer; type: string }> {
    const res = new Response(form);
    return { body: Buffer.from(await res.arrayBuffer()), type: res.headers.get("content-type")! };
  }

  function postBlobs(t: ProjectApi, body: FormData | Buffer | string, type?: string): Promise<Response> {
    return t.request("/blobs", { method: "POST", body, headers: type ? { "content-type": type } : {} });
  }

  /** POST /blobs of `chunk` sent again and again (up to `total` bytes, then `last`) until the server answers. */
  function streamBlobs(t: { url: string }, boundary: string, chunk: Buffer, total: number, last: string) {
    const headers = { "content-type": `multipart/form-data; boundary=${boundary}` };
    return sendUntilAnswered(`${t.url}/api/projects/demo/blobs`, { method: "POST", headers }, chunk, total, Buffer.from(last));
  }

  function getBlobs(t: ProjectApi, hashes: unknown): Promise<Response> {
    return t.request("/blobs/get", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sha256: hashes }),
    });
  }

  async function expectError(res: Response, status: number, error: string): Promise<Record<string, unknown>> {
    const body = (await res.json()) as Record<string, unknown>;
    expect({ status: res.status, ...body }).toMatchObject({ status, error, message: expect.any(String) });
    return body;
  }

  async function isStored(t: ProjectApi, content: string | Uint8Array): Promise<boolean> {
    return (await t.request(`/blobs/${sha256(content)}`, { method: "HEAD" })).status === 200;
  }

  describe("POST /blobs", () => {
    it("stores new blobs and reports the ones it already had as present", async () => {
      const t = await projectServer();
      await t.upload("old");
      const res = await postBlobs(t, formOf(["old", "new", new Uint8Array([0, 255, 13, 10])]));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        stored: [sha256("new"), sha256(new Uint8Array([0, 255, 13, 10]))],
        present: [sha256("old")],
      });
      expect(await (await t.request(`/blobs/${sha256("new")}`)).text()).toBe("new");
      const blob = await t.upload("new");
      expect((await t.commit({ changes: [{ op: "put", path: "n.txt", ...blob }] })).status).toBe(200);
    });

    it("accepts an empty blob and exactly 1000 parts", async () => {
      const t = await testServer();
      const contents = ["", ...Array.from({ length: 999 }, (_, i) => `blob ${i}`)];
      const res = await postBlobs(t, formOf(contents));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { stored: string[] }).stored).toHaveLength(1000);
      expect(await isStored(t, "")).toBe(true);
    });

    it("refuses a wrong hash among good parts with hash_mismatch naming it, and stores none of them", async () => {
      const t = await projectServer();
      const form = formOf(["good one", "good two"]);
      form.append(sha256("claimed"), new Blob(["actual bytes"]));
      form.append(sha256("good three"), new Blob(["good three"]));
      const body = await expectError(await postBlobs(t, form), 400, "hash_mismatch");
      expect(body.sha256).toBe(sha256("claimed"));
      for (const content of ["good one", "good two", "good three", "claimed", "actual bytes"]) {
        expect(await isStored(t, content)).toBe(false);
      }
    });

    it("refuses a truncated body with invalid_multipart and stores nothing", async () => {
      const t = await projectServer();
      const { body, type } = await encode(formOf(["first part", "second part"]));
      for (const cut of [body.length - 10, Math.floor(body.length / 2)]) {
        await expectError(await postBlobs(t, body.subarray(0, cut), type), 400, "invalid_multipart");
      }
      expect(await isStored(t, "first part")).toBe(false);
    });

    it.each([
      ["garbage under a multipart type", "multipart/form-data; boundary=xyz", "this is not multipart"],
      ["a multipart type without a boundary", "multipart/form-data", "x"],
      ["a JSON body", "application/json", "{}"],
      ["a form-urlencoded body", "application/x-www-form-urlencoded", "a=b"],
    ])("refuses %s with invalid_multipart", async (_name, type, body) => {
      const t = await projectServer();
      await expectError(await postBlobs(t, body, type), 400, "invalid_multipart");
    });

    it("refuses a part whose name is not a lowercase sha256 with invalid_multipart", async () => {
      const t = await projectServer();
      const form = formOf(["x"], (bytes) => sha256(bytes).toUpperCase());
      const body = await expectError(await postBlobs(t, form), 400, "invalid_multipart");
      expect(body.message).toContain(`"${sha256("x").toUpperCase()}"`); // the name it refuses
      expect(await isStored(t, "x")).toBe(false);
    });

    it("refuses 1001 parts with 413 too_large and stores nothing", async () => {
      const t = await projectServer();
      const contents = Array.from({ length: 1001 }, (_, i) => `part ${i}`);
      await expectError(await postBlobs(t, formOf(contents)), 413, "too_large");
      expect(await isStored(t, "part 0")).toBe(false);
    });

    it("refuses a body of many tiny parts as soon as it passes the part limit, before the rest is sent", async () => {
      const t = await testServer();
      const part = Buffer.from(`--bomb\r\nContent-Disposition: form-data; name="${sha256("")}"\r\n\r\n\r\n`);
      const chunk = Buffer.concat(Array.from({ length: 500 }, () => part));
      const total = 800 * chunk.length; // 400,000 parts, about 47 MB: under the byte limit
      const { outcome, written } = await streamBlobs(t, "bomb", chunk, total, "--bomb--\r\n");
      expect([413, "EPIPE", "ECONNRESET"]).toContain(outcome);
      expect(written).toBeLessThan(total / 2);
      expect(await isStored(t, "")).toBe(false);
    });

    it("refuses parts over the byte limit with 413 too_large and stores nothing", async () => {
      const t = await testServer({ maxBatchBytes: 1000 });
      const form = formOf(["a".repeat(600), "b".repeat(600)]);
      await expectError(await postBlobs(t, form), 413, "too_large");
      expect(await isStored(t, "a".repeat(600))).toBe(false);
    });

    it("refuses a part over the one-blob limit with 413 too_large naming it, as PUT /blobs would, and stores nothing", async () => {
      const t = await testServer({ maxBlobBytes: 1000 });
      const big = "c".repeat(1001);
      const body = await expectError(await postBlobs(t, formOf(["small", big])), 413, "too_large");
      expect(body.sha256).toBe(sha256(big));
      expect(await isStored(t, "small")).toBe(false);
      expect(await isStored(t, big)).toBe(false);
    });

    it("refuses a part as soon as it passes the one-blob limit, before the rest is sent", async () => {
      const t = await testServer({ maxBlobBytes: 100_000 });
      // One part that never ends: every chunk after the first is more of its bytes.
      const chunk = Buffer.concat([
        Buffer.from(`--big\r\nContent-Disposition: form-data; name="${sha256("x")}"\r\n\r\n`),
        Buffer.alloc(64 * 1024, 0x61),
      ]);
      const total = 300 * chunk.length; // about 20 MB: under the byte limit of a request
      const { outcome, written } = await streamBlobs(t, "big", chunk, total, "\r\n--big--\r\n");
      expect([413, "EPIPE", "ECONNRESET"]).toContain(outcome);
      expect(written).toBeLessThan(total / 2);
    });

    it("refuses a body declared over 64 MiB at once, by default, without waiting for it", async () => {
      const t = await projectServer();
      const { type } = await encode(formOf(["x"]));
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${t.url}/api/projects/${t.project}/blobs`, {
          method: "POST",
          headers: { "content-type": type, "content-length": String(65 * 1024 * 1024 + 1_000_000) },
        });
        req.on("response", (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        });
        req.on("error", reject);
        req.flushHeaders(); // headers only: the body never comes
      });
      expect(status).toBe(413);
    });
  });

  describe("POST /blobs/get", () => {
    it("answers every asked blob as multipart/form-data, one part per blob named by its sha256", async () => {
      const t = await projectServer();
      const binary = new Uint8Array(3000).map((_, i) => (i * 31) % 256);
      const hashes = [(await t.upload("one")).sha256, (await t.upload(binary)).sha256, (await t.upload("")).sha256];
      const res = await getBlobs(t, hashes);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^multipart\/form-data; boundary=/);
      const form = await res.formData();
      expect([...form.keys()]).toEqual(hashes);
      const bytes = async (name: string) => new Uint8Array(await (form.get(name) as Blob).arrayBuffer());
      expect(Buffer.from(await bytes(hashes[0]!)).toString()).toBe("one");
      expect(await bytes(hashes[1]!)).toEqual(binary);
      expect((await bytes(hashes[2]!)).length).toBe(0);
    });

    it("answers 404 not_found listing exactly the missing blobs", async () => {
      const t = await projectServer();
      const { sha256: present } = await t.upload("here");
      const body = await expectError(await getBlobs(t, [present, sha256("gone"), sha256("away")]), 404, "not_found");
      expect(body.missing).toEqual([sha256("gone"), sha256("away")]);
    });

    it("refuses more than 1000 hashes with 413 too_large", async () => {
      const t = await projectServer();
      const hashes = Array.from({ length: 1001 }, (_, i) => sha256(`h${i}`));
      await expectError(await getBlobs(t, hashes), 413, "too_large");
    });

    it("answers 413 too_large when the answer would pass the byte limit", async () => {
      const t = await testServer({ maxBatchBytes: 1000 });
      const hashes = [(await t.upload("a".repeat(600))).sha256, (await t.upload("b".repeat(600))).sha256];
      await expectError(await getBlobs(t, hashes), 413, "too_large");
      expect((await getBlobs(t, hashes.slice(0, 1))).status).toBe(200);
    });

    it.each([
      ["not a list", "abc"],
      ["a bad hash", ["xyz"]],
      ["uppercase", [sha256("x").toUpperCase()]],
    ])("refuses %s with invalid_request", async (_name, hashes) => {
      const t = await projectServer();
      await expectError(await getBlobs(t, hashes), 400, "invalid_request");
    });
  });
});
