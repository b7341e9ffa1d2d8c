import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../../src/server/index.js";
import { spawnServe } from "../kit/serve-child.js";
import { createProject, listFiles, sha256, storeCases, tempDir, testServer as fileServer, type ProjectApi } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();

// POST /blobs is made durable once for the whole request (docs/server.md): on --data one pack file
// (one fsync of it, one of its directory, one of the project's blobs.txt), on --db one
// transaction. What each blob answers, who may see it, and that it outlives a restart are those of
// PUT /blobs/{sha256}.

function formOf(blobs: string[]): FormData {
  const form = new FormData();
  for (const blob of blobs) form.append(sha256(blob), new Blob([Buffer.from(blob)]));
  return form;
}

async function postBlobs(t: ProjectApi, blobs: string[], project?: string): Promise<{ stored: string[]; present: string[] }> {
  const res = await t.request("/blobs", { method: "POST", body: formOf(blobs) }, project);
  expect(res.status).toBe(200);
  return (await res.json()) as { stored: string[]; present: string[] };
}

const blobsOf = (name: string, count: number) => Array.from({ length: count }, (_, i) => `${name} blob ${i}\n`.repeat(1 + (i % 7)));

describe.each(storeCases(pg))("%s store", (store, testServer) => {
  it("stores the new blobs of one POST /blobs together: one pack file (--data), one transaction (--db)", async () => {
    const t = await testServer();
    const blobs = blobsOf("pack", 60);
    expect((await postBlobs(t, blobs)).stored).toHaveLength(60);
    if (store === "--data") {
      const files = await listFiles(join(t.dataDir, "blobs"));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^packs[/\\][0-9a-f-]+\.pack$/);
    } else {
      const hashes = blobs.map((blob) => sha256(blob));
      for (const table of ["blobs", "blob_chunks", "project_blobs"]) {
        const rows = await t.query<{ n: string }>(`SELECT count(DISTINCT xmin::text) AS n FROM ${table} WHERE sha256 = ANY($1)`, [hashes]);
        expect(rows[0]!.n, table).toBe("1");
      }
    }
    for (const blob of blobs) expect(await (await t.request(`/blobs/${sha256(blob)}`)).text()).toBe(blob);
    expect(await t.storedBlobs()).toEqual(blobs.map((blob) => sha256(blob)).sort());
  });

  it("stores a pack holding a blob of several 1 MiB chunks and empty and small ones, each read back whole", async () => {
    const t = await testServer();
    const big = Buffer.from(Array.from({ length: 2 * 1024 * 1024 + 5 }, (_, i) => (i * 13) % 251));
    const form = new FormData();
    for (const bytes of [Buffer.from("small"), big, Buffer.alloc(0)]) form.append(sha256(bytes), new Blob([bytes]));
    expect((await t.request("/blobs", { method: "POST", body: form })).status).toBe(200);
    expect(Buffer.from(await (await t.request(`/blobs/${sha256(big)}`)).arrayBuffer()).equals(big)).toBe(true);
    expect(await (await t.request(`/blobs/${sha256("small")}`)).text()).toBe("small");
    expect(await (await t.request(`/blobs/${sha256("")}`)).text()).toBe("");
  });

  it("keeps a pack's blobs across a restart, visible to its project only, and stores them again for another", async () => {
    const t = await testServer({ projects: ["demo", "other"] });
    const blobs = blobsOf("kept", 5);
    await postBlobs(t, blobs);
    await t.restart();
    for (const blob of blobs) {
      expect(await (await t.request(`/blobs/${sha256(blob)}`)).text()).toBe(blob);
      expect((await t.request(`/blobs/${sha256(blob)}`, { method: "HEAD" }, "other")).status).toBe(404);
    }
    // Another project's upload is "stored" (what others hold is never told), then "present" for it too.
    expect(await postBlobs(t, blobs, "other")).toEqual({ stored: blobs.map((blob) => sha256(blob)), present: [] });
    expect(await postBlobs(t, [...blobs, "new one"], "other")).toEqual({
      stored: [sha256("new one")],
      present: blobs.map((blob) => sha256(blob)),
    });
    const blob = { sha256: sha256(blobs[0]!), size: Buffer.byteLength(blobs[0]!) };
    expect((await t.commit({ changes: [{ op: "put", path: "a.txt", ...blob }] }, undefined, "other")).status).toBe(200);
  });
});

describe("--data store", () => {
  it("drops a pack left half-written by a crash, and keeps the whole ones", async () => {
    const t = await fileServer();
    const blobs = blobsOf("whole", 3);
    await postBlobs(t, blobs);
    await t.close();
    await writeFile(join(t.dataDir, "blobs", "packs", ".tmp-left-over"), "partial");
    await t.restart();
    const files = await listFiles(join(t.dataDir, "blobs"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.pack$/);
    for (const blob of blobs) expect(await (await t.request(`/blobs/${sha256(blob)}`)).text()).toBe(blob);
  });

  it("reads a data directory without packs, and makes the packs directory with the first pack", async () => {
    const t = await fileServer();
    await t.close();
    await mkdir(join(t.dataDir, "blobs"), { recursive: true });
    await t.restart();
    expect(await listFiles(join(t.dataDir, "blobs"))).toEqual([]);
    await postBlobs(t, ["first"]);
    expect(await t.storedBlobs()).toEqual([sha256("first")]);
  });
});

describe("crash", () => {
  it("keeps every blob of an answered POST /blobs when the server is SIGKILLed right after the answer; an unanswered pack is whole or absent", async () => {
    const dataDir = await tempDir();
    const serve = spawnServe({ dataDir, port: 0, quiet: true });
    const url = await serve.listening();
    await createProject(url, "crash");
    const packs = [0, 1, 2].map((k) => blobsOf(`crash ${k}`, 40));
    const answered: string[][] = [];
    await Promise.all(
      packs.map(async (blobs) => {
        try {
          const res = await fetch(`${url}/api/projects/crash/blobs`, { method: "POST", body: formOf(blobs) });
          if (res.status !== 200) return;
          answered.push(blobs);
          serve.child.kill("SIGKILL"); // at once after the first answer: the others are in flight
        } catch {
          // cut off by the kill: never answered
        }
      }),
    );
    expect(answered.length).toBeGreaterThan(0);
    await serve.exited;

    const server = await startServer({ dataDir, port: 0, host: "127.0.0.1" });
    try {
      const read = async (blob: string) => {
        const res = await fetch(`${server.url}/api/projects/crash/blobs/${sha256(blob)}`);
        return res.status === 200 ? await res.text() : res.status;
      };
      for (const blobs of answered) for (const blob of blobs) expect(await read(blob)).toBe(blob);
      for (const blobs of packs) {
        const got = await Promise.all(blobs.map(read));
        expect(got.every((value, i) => value === blobs[i]) || got.every((value) => value === 404), "whole or absent").toBe(true);
      }
      expect((await listFiles(join(dataDir, "blobs"))).filter((file) => file.includes(".tmp-"))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
