#!/usr/bin/env node
// Peak memory of `uspark serve` under requests built to cost it memory (issue: "POST /blobs with a
// million tiny parts holds ~300 MiB and blocks for 2 s; the --db store holds a whole blob in
// memory"). Each case runs a fresh server (the built CLI) and reads its peak RSS (VmHWM in
// /proc/<pid>/status: Linux only) before stopping it: idle, under a multipart bomb, and a big blob
// in and out of each store. Not getrusage: a child's ru_maxrss starts from its parent's peak.
// Starts a throwaway PostgreSQL cluster (initdb and pg_ctl, as npm test needs).
//
//   node bench/server-memory.mjs [--bin PATH] [--parts N] [--mib N]
//     --bin    another build's bin/uspark.js (an older checkout's, for a before/after figure)
//     --parts  parts of the multipart bomb (default 1000000, about 110 MB)
//     --mib    size of the --db blob (default 100, the largest a blob may be)

import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startCluster } from "./lib/pg-cluster.mjs";
import { createProject, serve } from "./lib/server-commits.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;

/** Runs `work(url)` against a fresh server; resolves with the server's peak RSS and work's result. */
async function measured(bin, args, work) {
  const server = await serve(bin, args);
  try {
    await createProject(server.url, "bench");
    const result = await work(`${server.url}/api/projects/bench`);
    const kib = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))[1]);
    return { peakRssMiB: kib / 1024, ...result };
  } finally {
    await server.stop();
  }
}

/** POST /blobs with `parts` empty parts (about 110 bytes each, each a valid empty blob), streamed; the answer and its time. */
function multipartBomb(api, parts) {
  const empty = createHash("sha256").digest("hex");
  const part = Buffer.from(`--bomb\r\nContent-Disposition: form-data; name="${empty}"\r\n\r\n\r\n`);
  const chunk = Buffer.concat(Array.from({ length: 1000 }, () => part));
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(`${api}/blobs`, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=bomb" } });
    let answered = false;
    let sent = 0;
    req.on("response", (res) => {
      answered = true;
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - started, sentMiB: (sent * chunk.length) / MiB }));
    });
    // A server that refuses early closes the connection while we still send: we may hear of the
    // close before we read its answer.
    req.on(
      "error",
      (error) => answered || resolve({ status: error.code, ms: performance.now() - started, sentMiB: (sent * chunk.length) / MiB }),
    );
    const pump = () => {
      while (!answered && sent < parts / 1000) {
        sent++;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end("--bomb--\r\n");
    };
    pump();
  });
}

/** POST /blobs of `parts` parts of random bytes filling `mib` MiB (the batch limit is 64 MiB); the answer and its time. */
async function fullBatch(api, parts, mib) {
  const form = new FormData();
  for (let i = 0; i < parts; i++) {
    const bytes = randomBytes(Math.floor((mib * MiB) / parts));
    form.append(createHash("sha256").update(bytes).digest("hex"), new Blob([bytes]));
  }
  const started = performance.now();
  const res = await fetch(`${api}/blobs`, { method: "POST", body: form });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

/** PUT a blob of `mib` MiB, streamed from a generator, then GET it, reading as it comes; the times. */
async function bigBlob(api, mib) {
  const piece = Buffer.alloc(MiB, 7);
  const hash = createHash("sha256");
  for (let i = 0; i < mib; i++) hash.update(piece);
  const sha256 = hash.digest("hex");
  async function* body() {
    for (let i = 0; i < mib; i++) yield piece;
  }
  const started = performance.now();
  const put = await fetch(`${api}/blobs/${sha256}`, { method: "PUT", body: body(), duplex: "half" });
  if (put.status !== 201) throw new Error(`PUT blob answered ${put.status}: ${await put.text()}`);
  const putMs = performance.now() - started;
  const res = await fetch(`${api}/blobs/${sha256}`);
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  if (bytes !== mib * MiB) throw new Error(`GET blob gave ${bytes} bytes`);
  return { putMs, getMs: performance.now() - started - putMs };
}

/** Prints one row per case: idle --data, --data under the bomb, full batches, a big blob on --data, idle --db, a big blob on --db. */
async function main() {
  const args = process.argv.slice(2);
  const option = (name, otherwise) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : otherwise);
  const bin = path.resolve(option("bin", path.join(here, "..", "bin", "uspark.js")));
  const bombParts = Number(option("parts", 1_000_000));
  const blobMiB = Number(option("mib", 100));
  const record = (name, { peakRssMiB, ...detail }) => {
    const shown = Object.entries(detail).map(([key, value]) => `${key} ${typeof value === "number" ? value.toFixed(0) : value}`);
    process.stdout.write(`${name.padEnd(50)} peak RSS ${peakRssMiB.toFixed(0).padStart(4)} MiB   ${shown.join(", ")}\n`);
  };
  process.stdout.write(`uspark serve (${bin}), node ${process.version}\n`);
  const work = mkdtempSync(path.join(os.tmpdir(), "uspark-bench-memory-"));
  const cluster = await startCluster();
  try {
    record("--data, idle", await measured(bin, ["--data", path.join(work, "idle")], async () => ({})));
    const bomb = `--data, POST /blobs of ${bombParts} empty parts`;
    record(bomb, await measured(bin, ["--data", path.join(work, "bomb")], (api) => multipartBomb(api, bombParts)));
    for (const parts of [1, 1000]) {
      const name = `--data, POST /blobs of ${parts} part${parts > 1 ? "s" : ""}, 63 MiB in all`;
      record(name, await measured(bin, ["--data", path.join(work, `batch${parts}`)], (api) => fullBatch(api, parts, 63)));
    }
    // The file store has streamed blobs both ways from the start: the baseline for --db.
    record(
      `--data, PUT then GET of a ${blobMiB} MiB blob`,
      await measured(bin, ["--data", path.join(work, "blob")], (api) => bigBlob(api, blobMiB)),
    );
    record("--db, idle", await measured(bin, ["--db", await cluster.freshSchemaUrl()], async () => ({})));
    const blob = `--db, PUT then GET of a ${blobMiB} MiB blob`;
    record(blob, await measured(bin, ["--db", await cluster.freshSchemaUrl()], (api) => bigBlob(api, blobMiB)));
  } finally {
    await cluster.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
