// What a scoped token costs a request: the store is read at every request (no cache, so a revoke
// is seen at once), the admin token is compared in memory. N sequential GET /files per token kind,
// twice each (the first round warms up), on --data and on a throwaway PostgreSQL (--db).
// Run: npm run build && N=2000 node bench/token-lookup.mjs
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
const dist = new URL("../dist/server/index.js", import.meta.url).href;
const { startServer, openCredentials, createToken } = await import(dist);
const { startCluster } = await import("./lib/pg-cluster.mjs");
const ADMIN = "admin";
const N = Number(process.env.N ?? 2000);

async function run(label, options) {
  const server = await startServer({ ...options, port: 0, token: ADMIN });
  await fetch(`${server.url}/api/projects`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ id: "demo" }),
  });
  const opened = await openCredentials(options);
  // 100 other tokens in the store, as a real one would hold
  for (let i = 0; i < 100; i++) await createToken(opened.credentials, { projects: ["p" + i], access: "read" }, Date.now());
  const { secret } = await createToken(opened.credentials, { projects: ["demo"], access: "read" }, Date.now());
  await opened.close();
  for (const [who, token] of [
    ["admin", ADMIN],
    ["scoped", secret],
    ["admin", ADMIN],
    ["scoped", secret],
  ]) {
    const started = performance.now();
    for (let i = 0; i < N; i++) {
      const res = await fetch(`${server.url}/api/projects/demo/files`, { headers: { authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(String(res.status));
      await res.arrayBuffer();
    }
    const ms = performance.now() - started;
    console.log(`${label} ${who}: ${((ms / N) * 1000).toFixed(0)} µs/request (${N} sequential GET /files)`);
  }
  await server.close();
}

const dataDir = await mkdtemp(join(tmpdir(), "authbench-"));
await run("--data", { dataDir });
await rm(dataDir, { recursive: true, force: true });
const cluster = await startCluster();
try {
  await run("--db", { databaseUrl: await cluster.freshSchemaUrl() });
} finally {
  await cluster.destroy();
}
