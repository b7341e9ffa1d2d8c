// Commit throughput and latency of the reference server: the `--data` store, and one and two
// `--db` replicas on a throwaway local PostgreSQL cluster. Each server is the built CLI in a child
// process; clients commit concurrently, one project each, alternating between the replicas.

import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { schemasOn, startCluster } from "./pg-cluster.mjs";

/** Starts `uspark serve <args> --port 0`; resolves with its URL, its pid and a stop function. */
export function serve(bin, args) {
  const child = spawn(process.execPath, [bin, "serve", ...args, "--port", "0", "--quiet"], { stdio: ["ignore", "ignore", "pipe"] });
  let text = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve ${args.join(" ")} did not start in 30 s:\n${text}`)), 30_000);
    child.stderr.on("data", (chunk) => {
      text += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        pid: child.pid,
        stop: () => new Promise((done) => (child.exitCode !== null ? done() : (child.once("exit", done), child.kill("SIGTERM")))),
      });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}:\n${text}`)));
  });
}

async function expectOk(res, what) {
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Creates a project (v1.2); an older server (404/405) creates it at its first commit. */
export async function createProject(url, id) {
  const res = await fetch(`${url}/api/projects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  if (res.status !== 201 && res.status !== 404 && res.status !== 405)
    throw new Error(`POST /api/projects answered ${res.status}: ${await res.text()}`);
}

/** `clients` concurrent committers, `commits` each; resolves with per-commit latencies and wall time. */
async function load(urls, { clients, commits }) {
  for (let client = 0; client < clients; client++) await createProject(urls[0], `bench-${client}`);
  const content = `bench ${randomUUID()}\n`;
  const blob = { sha256: createHash("sha256").update(content).digest("hex"), size: Buffer.byteLength(content) };
  // Uploaded to each project: a project sees only the blobs uploaded to it (docs/api.md, "Access").
  for (let client = 0; client < clients; client++) {
    await expectOk(
      await fetch(`${urls[0]}/api/projects/bench-${client}/blobs/${blob.sha256}`, { method: "PUT", body: content }),
      "PUT blob",
    );
  }
  const latencies = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; i < commits; i++) {
        const url = urls[(client + i) % urls.length];
        const t0 = performance.now();
        const res = await fetch(`${url}/api/projects/bench-${client}/commits`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
          body: JSON.stringify({ changes: [{ op: "put", path: `f${i}.txt`, ...blob }] }),
        });
        await expectOk(res, "commit");
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Another's running cluster (the test suite's): destroy() ends only the pool made here. */
function borrowedCluster(url) {
  const { admin, freshSchemaUrl } = schemasOn(url);
  return { freshSchemaUrl, destroy: () => admin.end() };
}

/**
 * Measures each setup; resolves with `{ name, commits, perSecond, p50Ms, p99Ms }` rows. `onRow`
 * sees each row as it is measured. `pgUrl`: a running cluster to make the --db schemas on (the
 * test suite's) instead of a throwaway one.
 */
export async function measureServerCommits({ bin, clients, commits, pgUrl, onRow }) {
  const rows = [];
  const record = (name, { latencies, seconds }) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    const row = {
      name,
      commits: sorted.length,
      perSecond: sorted.length / seconds,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
    };
    rows.push(row);
    onRow?.(row);
  };

  const dataDir = mkdtempSync(path.join(os.tmpdir(), "uspark-bench-data-"));
  try {
    const server = await serve(bin, ["--data", dataDir]);
    try {
      record("--data (file store, fsync per commit)", await load([server.url], { clients, commits }));
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const cluster = pgUrl ? borrowedCluster(pgUrl) : await startCluster();
  try {
    for (const replicas of [1, 2]) {
      const db = await cluster.freshSchemaUrl();
      const servers = [];
      try {
        for (let i = 0; i < replicas; i++) servers.push(await serve(bin, ["--db", db]));
        const name = `--db, ${replicas} replica${replicas === 1 ? "" : "s"} (local PostgreSQL, fsync off)`;
        record(
          name,
          await load(
            servers.map((s) => s.url),
            { clients, commits },
          ),
        );
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
  } finally {
    await cluster.destroy();
  }
  return rows;
}
