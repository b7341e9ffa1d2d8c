import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/transfer/client.js";
import { MAX_BATCH_PARTS } from "../../src/api/validate.js";
import { packBlobs, Transfer, type UploadItem } from "../../src/transfer/blobs.js";
import {
  captureReporter,
  isBlobDownload,
  isBlobUpload,
  sha256,
  startProxy,
  startRef,
  v1Only,
  type Action,
  type RefServer,
  type SeenRequest,
} from "../kit/sync.js";

const TOKEN = "transfer-test-token";

describe("packBlobs", () => {
  it("cuts at the part limit and the byte limit; a blob larger than a pack goes alone", () => {
    const sizes = (packs: { size: number }[][]) => packs.map((p) => p.map((b) => b.size));
    expect(packBlobs([{ size: 4 }, { size: 4 }, { size: 4 }], 8)).toEqual([[{ size: 4 }, { size: 4 }], [{ size: 4 }]]);
    expect(sizes(packBlobs([{ size: 1 }, { size: 20 }, { size: 1 }], 8))).toEqual([[1], [20], [1]]);
    expect(
      packBlobs(
        Array.from({ length: 2001 }, () => ({ size: 0 })),
        8,
      ).map((p) => p.length),
    ).toEqual([MAX_BATCH_PARTS, MAX_BATCH_PARTS, 1]);
    expect(packBlobs([], 8)).toEqual([]);
  });
});

let server: RefServer;
beforeEach(async () => {
  server = await startRef(TOKEN);
});
afterEach(async () => {
  await server.stop();
});

function setup(apiUrl: string, packBytes?: number) {
  const log = captureReporter([TOKEN]);
  const client = new ApiClient({ apiUrl, projectId: "p1", token: TOKEN, requestTimeoutMs: 5000, report: log.reporter });
  const transfer = new Transfer(client, { concurrency: 4, report: log.reporter, packBytes, call: (run) => run() });
  return { log, client, transfer, signal: new AbortController().signal };
}

const item = (content: string): UploadItem => {
  const bytes = Buffer.from(content);
  return { sha256: sha256(bytes), size: bytes.length, bytes, load: async () => bytes };
};

async function withProxy(rule: (req: SeenRequest) => Action | undefined, run: (url: string, seen: SeenRequest[]) => Promise<void>) {
  const proxy = await startProxy(server.url, rule);
  try {
    await run(proxy.url, proxy.seen);
  } finally {
    await proxy.close();
  }
}

describe("Transfer against the reference server", () => {
  it("uploads in packs, then knows the blobs: nothing is sent twice; downloads in packs", async () => {
    // 12 blobs of 6-7 bytes (74 in all), packs of at most 40 bytes: two packs.
    const { client, transfer, signal } = setup(server.url, 40);
    const items = Array.from({ length: 12 }, (_, i) => item(`blob ${i}`));
    const outcomes = await transfer.uploadBlobs(items, signal);
    expect([...outcomes.values()].every((o) => o === "ok")).toBe(true);
    expect(server.requests.filter(isBlobUpload)).toHaveLength(2);
    expect(await transfer.uploadBlobs(items, signal)).toEqual(new Map(items.map((i) => [i.sha256, "ok"])));
    expect(server.requests.filter(isBlobUpload)).toHaveLength(2);

    const got = new Map<string, string>();
    const failed = await transfer.downloadBlobs(items, async (sha, bytes) => void got.set(sha, Buffer.from(bytes).toString()), signal);
    expect(failed.size).toBe(0);
    expect(got.get(items[11]!.sha256)).toBe("blob 11");
    expect(server.requests.filter(isBlobDownload)).toHaveLength(2);
    await client.close();
  });

  it("splits a pack the server finds too large (413) and still stores every blob", async () => {
    let refused = 0;
    await withProxy(
      (req) =>
        isBlobUpload(req) && req.body.length > 3000
          ? (refused++, { kind: "answer", status: 413, body: { error: "too_large", message: "fewer" } })
          : undefined,
      async (url) => {
        const { client, transfer, signal } = setup(url);
        const items = Array.from({ length: 8 }, (_, i) => item(`${i}`.repeat(700)));
        const outcomes = await transfer.uploadBlobs(items, signal);
        expect([...outcomes.values()]).toEqual(Array(8).fill("ok"));
        expect(refused).toBeGreaterThan(0);
        await client.close();
      },
    );
  });

  it("an answer that does not confirm a blob fails that blob", async () => {
    await withProxy(
      (req) => (isBlobUpload(req) ? { kind: "answer", status: 200, body: { stored: [sha256("a")], present: [] } } : undefined),
      async (url) => {
        const { client, transfer, signal } = setup(url);
        const outcomes = await transfer.uploadBlobs([item("a"), item("b")], signal);
        expect(outcomes.get(sha256("a"))).toBe("ok");
        expect(outcomes.get(sha256("b"))).toEqual({ reason: "upload failed: the server did not confirm it" });
        await client.close();
      },
    );
  });

  it("a v1 server (404/405 on the v1.1 routes): one notice, then one request per blob, both ways", async () => {
    await withProxy(v1Only, async (url, seen) => {
      const { log, client, transfer, signal } = setup(url);
      const items = [item("x"), item("y"), item("z")];
      const outcomes = await transfer.uploadBlobs(items, signal);
      expect([...outcomes.values()]).toEqual(["ok", "ok", "ok"]);
      const failed = await transfer.downloadBlobs(items, async () => {}, signal);
      expect(failed.size).toBe(0);
      expect(transfer.apiVersion).toBe("v1");
      expect(log.events("api-v1")).toHaveLength(1);
      expect(log.events("api-v1")[0]!.level).toBe("info");
      // One pack try (404), then three PUTs; no download pack tried again after the fallback.
      expect(seen.filter(isBlobUpload).map((r) => r.method)).toEqual(["POST", "PUT", "PUT", "PUT"]);
      expect(seen.filter(isBlobDownload).map((r) => r.method)).toEqual(["GET", "GET", "GET"]);
      await client.close();
    });
  });

  it("a blob the server does not have fails alone; the others are handed on", async () => {
    const { client, transfer, signal } = setup(server.url);
    const good = item("good");
    const absent = item("never uploaded");
    await transfer.uploadBlobs([good], signal);
    const handed: string[] = [];
    const failed = await transfer.downloadBlobs([good, absent], async (sha) => void handed.push(sha), signal);
    expect(handed).toEqual([good.sha256]);
    expect(failed.get(absent.sha256)).toBe("the server does not have it");
    await client.close();
  });

  it("a part whose bytes do not match its name is never handed on", async () => {
    const wrong = createServer((req, res) => {
      req.resume();
      req.on("end", async () => {
        const form = new FormData();
        form.append(sha256("expected"), new Blob([Buffer.from("something else")]), "x");
        const answer = new Response(form);
        res.writeHead(200, { "content-type": answer.headers.get("content-type")! });
        res.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => wrong.listen(0, "127.0.0.1", resolve));
    try {
      const { client, transfer, signal } = setup(`http://127.0.0.1:${(wrong.address() as AddressInfo).port}`);
      const handed: string[] = [];
      const failed = await transfer.downloadBlobs([{ sha256: sha256("expected"), size: 8 }], async (sha) => void handed.push(sha), signal);
      expect(handed).toEqual([]);
      expect(failed.get(sha256("expected"))).toBe("the server sent bytes with another sha256");
      await client.close();
    } finally {
      wrong.closeAllConnections();
      await new Promise<void>((resolve) => wrong.close(() => resolve()));
    }
  });
});
