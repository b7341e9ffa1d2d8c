import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiClient, ApiError, requestDeadlineMs } from "../../src/transfer/client.js";
import { appendNext, TranscriptFailed, TranscriptsNotSupported } from "../../src/transcript/upload.js";
import { captureReporter, sha256, startProxy, startRecorder, startRef, startSlowReader, type RefServer } from "../kit/sync.js";
import { ZERO_CHAIN } from "../../src/api/chain.js";

const TOKEN = "s3cret-token-value";

describe("ApiClient against the reference server", () => {
  let server: RefServer;
  let client: ApiClient;
  let log: ReturnType<typeof captureReporter>;
  beforeEach(async () => {
    server = await startRef(TOKEN);
    log = captureReporter();
    client = new ApiClient({ apiUrl: server.url, projectId: "p1", token: TOKEN, requestTimeoutMs: 5000, report: log.reporter });
  });
  afterEach(async () => {
    await client.close();
    await server.stop();
  });

  it("lists, uploads, probes and commits", async () => {
    expect(await client.listFiles()).toEqual({ version: 0, files: [], api: "1.2", chain: ZERO_CHAIN });
    const bytes = Buffer.from("hello\n");
    const sha = sha256(bytes);
    expect(await client.hasBlob(sha)).toBe(false);
    expect(await client.putBlob(sha, bytes)).toBe("created");
    expect(await client.putBlob(sha, bytes)).toBe("present");
    expect(await client.hasBlob(sha)).toBe(true);
    const key = crypto.randomUUID();
    const changes = [{ op: "put" as const, path: "a.txt", sha256: sha, size: bytes.length }];
    expect(await client.commit(changes, { agent: "test" }, key)).toMatchObject({ version: 1 });
    expect(await client.commit(changes, { agent: "test" }, key)).toMatchObject({ version: 1 }); // replay
    expect(await client.listFiles()).toMatchObject({ version: 1, api: "1.2", files: [{ path: "a.txt", sha256: sha, size: 6 }] });
    // Every request is logged at debug level, never with the token.
    expect(log.events("request").length).toBe(8);
    expect(log.text()).not.toContain(TOKEN);
  });

  it("sends blobs in one POST /blobs and reads them back from POST /blobs/get by hash, binary and empty ones too", async () => {
    const blobs = [Buffer.from("one\r\n--uspark-"), randomBytes(70_000), Buffer.alloc(0)].map((bytes) => ({
      sha256: sha256(bytes),
      bytes,
    }));
    expect((await client.postBlobs(blobs)).stored).toHaveLength(3);
    const got = await client.getBlobs(
      blobs.map((blob) => blob.sha256),
      70_017,
    );
    expect([...got.keys()]).toEqual(blobs.map((blob) => blob.sha256));
    for (const { sha256: sha, bytes } of blobs) expect(Buffer.from(got.get(sha)!)).toEqual(bytes);
  });

  it("422 missing_blobs carries the missing hashes; 400 hash_mismatch is not retryable", async () => {
    const sha = sha256("nope");
    const error = await client
      .commit([{ op: "put", path: "x", sha256: sha, size: 4 }], { agent: "t" }, crypto.randomUUID())
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 422, code: "missing_blobs", retryable: false, fatal: false });
    expect(error.body.missing).toEqual([sha]);
    const mismatch = await client.putBlob(sha, Buffer.from("other")).catch((e) => e);
    expect(mismatch).toMatchObject({ status: 400, code: "hash_mismatch", retryable: false, fatal: false });
  });

  it("401 is fatal and names the token as the cause", async () => {
    const bad = new ApiClient({ apiUrl: server.url, projectId: "p1", token: "wrong", requestTimeoutMs: 5000 });
    const error = await bad.listFiles().catch((e) => e);
    await bad.close();
    expect(error).toMatchObject({ status: 401, fatal: true });
    expect(error.message).toMatch(/rejected the token/);
  });

  it("404 from a wrong --api-url path is fatal and says so", async () => {
    const wrong = new ApiClient({ apiUrl: `${server.url}/nested`, projectId: "p1", token: TOKEN, requestTimeoutMs: 5000 });
    const error = await wrong.listFiles().catch((e) => e);
    await wrong.close();
    expect(error).toMatchObject({ status: 404, fatal: true });
    expect(error.message).toMatch(/--api-url/);
  });
});

describe("ApiClient failures", () => {
  it("never follows a redirect: the token does not reach the other origin", async () => {
    const other = await startRecorder();
    const proxy = await startProxy("http://127.0.0.1:1", (req) => ({
      kind: "answer",
      status: 307,
      headers: { location: `${other.url}${req.url}` },
    }));
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", token: TOKEN, requestTimeoutMs: 5000 });
    try {
      const error = await client.listFiles().catch((e) => e);
      expect(error).toMatchObject({ status: 307, code: "redirect", fatal: true });
      expect(error.message).toContain(other.url);
      expect(error.message).not.toContain(TOKEN);
      expect(other.seen).toEqual([]);
    } finally {
      await client.close();
      await proxy.close();
      await other.close();
    }
  });

  it.each([
    ["cut short", "multipart/form-data; boundary=b", '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nbyt'],
    ["with a part without a name", "multipart/form-data; boundary=b", "--b\r\nContent-Type: text/plain\r\n\r\nbytes\r\n--b--\r\n"],
    ["without a boundary", "multipart/form-data", "--b--\r\n"],
  ])("takes a POST /blobs/get answer %s for a protocol error", async (_name, type, body) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": type, "content-length": String(Buffer.byteLength(body)) }).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = new ApiClient({
      apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      projectId: "p1",
      requestTimeoutMs: 5000,
    });
    try {
      const error = await client.getBlobs([sha256("bytes")], 5).catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: "protocol" });
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("times out a stalled request and classifies it as retryable", async () => {
    const proxy = await startProxy("http://127.0.0.1:1", () => ({ kind: "stall" }));
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", requestTimeoutMs: 200 });
    try {
      const started = Date.now();
      const error = await client.listFiles().catch((e) => e);
      expect(error).toMatchObject({ code: "timeout", retryable: true, fatal: false });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("a reset connection is a retryable network error; 503 carries Retry-After", async () => {
    let n = 0;
    const proxy = await startProxy("http://127.0.0.1:1", () =>
      n++ === 0 ? { kind: "reset" } : { kind: "answer", status: 503, headers: { "retry-after": "7" }, body: { error: "unavailable" } },
    );
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", requestTimeoutMs: 2000 });
    try {
      expect(await client.listFiles().catch((e) => e)).toMatchObject({ code: "network", retryable: true });
      expect(await client.listFiles().catch((e) => e)).toMatchObject({ status: 503, retryable: true, retryAfterMs: 7000 });
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("honours an abort signal", async () => {
    const proxy = await startProxy("http://127.0.0.1:1", () => ({ kind: "stall" }));
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", requestTimeoutMs: 10_000 });
    try {
      const controller = new AbortController();
      const reason = new Error("deadline");
      setTimeout(() => controller.abort(reason), 50);
      await expect(client.listFiles(controller.signal)).rejects.toBe(reason);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe("ApiClient uploads to a server that reads them slowly but steadily", () => {
  const MiB = 1024 * 1024;
  const REQUEST_TIMEOUT = 500;

  it("gives a pack, a v1 PUT and a transcript append their byte-sized deadline, not the request timeout", async () => {
    const server = await startRef();
    // 1.5 MiB/s per request: 2 MiB take about 1.3 s, well past the request timeout and well
    // within the deadline of 2 MiB at the slowest allowed rate (8 s).
    const slow = await startSlowReader(server.url, 1.5 * MiB);
    const client = new ApiClient({ apiUrl: slow.url, projectId: "p1", requestTimeoutMs: REQUEST_TIMEOUT });
    try {
      expect(requestDeadlineMs(REQUEST_TIMEOUT, 2 * MiB)).toBeGreaterThan(5000);
      const pack = Array.from({ length: 4 }, () => randomBytes(MiB / 2)).map((bytes) => ({ sha256: sha256(bytes), bytes }));
      const blob = randomBytes(2 * MiB);
      const events = Buffer.alloc(2 * MiB, "e");
      const [packed, put, appended] = await Promise.all([
        client.postBlobs(pack),
        client.putBlob(sha256(blob), blob),
        client.appendEvents("s1", 0, events),
      ]);
      expect(packed).toEqual({ stored: pack.map((b) => b.sha256), present: [] });
      expect(put).toBe("created");
      expect(appended).toEqual({ appended: true, length: events.length });
      // Each body really took longer to read than the request timeout.
      expect(slow.reads).toHaveLength(3);
      for (const read of slow.reads) expect(read.ms).toBeGreaterThan(REQUEST_TIMEOUT * 2);
    } finally {
      await client.close();
      await slow.close();
      await server.stop();
    }
  });

  it("counts two long transfers with the same deadline as two: one ending leaves the other's", async () => {
    const proxy = await startProxy("http://127.0.0.1:1", () => ({ kind: "stall" }));
    // Nothing times out while the test looks: the request timeout is long, the deadlines longer.
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", requestTimeoutMs: 10_000 });
    try {
      const one = new AbortController();
      const two = new AbortController();
      // Both started in the same millisecond: the same hard deadline.
      const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
      const first = client.getBlob(sha256("a"), 16 * MiB, one.signal).catch((e) => e);
      const second = client.getBlob(sha256("b"), 16 * MiB, two.signal).catch((e) => e);
      now.mockRestore();
      const until = client.longTransferDeadline();
      expect(until).toBeGreaterThan(Date.now() + 10_000);
      one.abort(new Error("first done"));
      await first;
      expect(client.longTransferDeadline()).toBe(until);
      two.abort(new Error("second done"));
      await second;
      expect(client.longTransferDeadline()).toBeUndefined();
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe("ApiClient on the sessions route", () => {
  const notFound = (body: unknown) => startProxy("http://127.0.0.1:1", () => ({ kind: "answer", status: 404, body }));

  it("takes a 404 without project_not_found for a v1 server: unsupported, transcripts are not supported", async () => {
    const proxy = await notFound({ error: "not_found", message: "no such route" });
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "p1", requestTimeoutMs: 2000 });
    try {
      expect(await client.appendEvents("s1", 0, Buffer.from("x\n")).catch((e) => e)).toMatchObject({
        status: 404,
        code: "unsupported",
        fatal: false,
      });
      const source = { from: 0, end: 2, read: async () => Buffer.from("x\n") };
      await expect(appendNext(source, 0, { client, sessionId: "s1", signal: new AbortController().signal })).rejects.toBeInstanceOf(
        TranscriptsNotSupported,
      );
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("takes 404 project_not_found for a wrong --project-id, never for a v1 server: the transcript fails, it is not dropped", async () => {
    const proxy = await notFound({ error: "project_not_found", message: "no such project" });
    const client = new ApiClient({ apiUrl: proxy.url, projectId: "nope", requestTimeoutMs: 2000 });
    try {
      const error = await client.appendEvents("s1", 0, Buffer.from("x\n")).catch((e) => e);
      expect(error).toMatchObject({ status: 404, code: "project_not_found", fatal: true });
      expect(error.message).toMatch(/unknown project id nope \(check --project-id\)/);
      const source = { from: 0, end: 2, read: async () => Buffer.from("x\n") };
      const failed = await appendNext(source, 0, { client, sessionId: "s1", signal: new AbortController().signal }).catch((e) => e);
      expect(failed).toBeInstanceOf(TranscriptFailed);
      expect(failed.message).toMatch(/--project-id/);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
