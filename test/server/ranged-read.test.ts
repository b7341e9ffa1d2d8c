// Stored bytes read from an offset (a page of a large file or transcript in the web view): both
// stores start there without reading, or yielding, the bytes before it.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { FileStore } from "../../src/server/file/store.js";
import { PgStore } from "../../src/server/pg/store.js";
import type { ProjectStore, StoredBytes } from "../../src/server/store.js";
import { sha256 } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";

const pg = usePgCluster();
const MiB = 1024 * 1024;

async function fileStore(): Promise<ProjectStore> {
  const dir = await mkdtemp(join(tmpdir(), "uspark-ranged-"));
  const store = await FileStore.open(dir);
  onTestFinished(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return store;
}

async function pgStore(): Promise<ProjectStore> {
  const store = await PgStore.open(await pg().freshSchemaUrl());
  onTestFinished(() => store.close());
  return store;
}

async function bytesFrom(stored: StoredBytes, from: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stored.chunks(from)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe.each([
  ["file store", fileStore],
  ["PostgreSQL store", pgStore],
])("%s", (_name, open) => {
  it("reads a blob of several chunks from any offset", async () => {
    const store = await open();
    await store.createProject("p"); // a blob is read by a project that holds it
    const bytes = Buffer.from(Array.from({ length: 2 * MiB + 5 }, (_, i) => (i * 13) % 251));
    await store.putBlob("p", sha256(bytes), async (write) => write(bytes));
    const blob = (await store.readBlob("p", sha256(bytes)))!;
    for (const from of [0, 1, MiB - 1, MiB, MiB + 7, 2 * MiB + 4, 2 * MiB + 5]) {
      expect((await bytesFrom(blob, from)).equals(bytes.subarray(from))).toBe(true);
    }
  });

  it("reads a transcript of several appends from any offset", async () => {
    const store = await open();
    await store.createProject("p"); // a blob is read by a project that holds it
    await store.createProject("demo");
    const parts = ["first line\n", "second\n", "third and last\n"];
    let offset = 0;
    for (const part of parts) {
      await store.appendEvents("demo", "s-1", offset, Buffer.from(part));
      offset += part.length;
    }
    const whole = parts.join("");
    const transcript = (await store.readEvents("demo", "s-1"))!;
    for (let from = 0; from <= whole.length; from++) {
      expect((await bytesFrom(transcript, from)).toString()).toBe(whole.slice(from));
    }
  });
});
