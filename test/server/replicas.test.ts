// Issue 14's replica test: two `serve --db` processes behind a round-robin proxy, four watchers
// pushing four projects at once, one replica SIGKILLed mid-run. Nothing lost, nothing twice.

import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import { createProject, eventually, tempDir } from "../kit/server.js";
import { usePgCluster } from "../kit/pg-cluster.js";
import { roundRobinProxy } from "./proxy.js";

const pg = usePgCluster();
const PROJECTS = ["alpha", "beta", "gamma", "delta"];

async function serveReplica(databaseUrl: string) {
  // A little latency keeps requests in flight when the replica is killed.
  // The TCP proxy passes on the Host of its own port: a name the replica must be told to serve.
  const { child, result } = await startCli(
    ["serve", "--db", databaseUrl, "--port", "0", "--quiet", "--latency", "20", "--allowed-host", "127.0.0.1"],
    {
      timeoutMs: 170_000,
    },
  );
  onTestFinished(() => {
    child.kill("SIGKILL");
  });
  const text = await waitForOutput(child.stderr, (seen) => /listening on http:\/\/\S+:\d+/.test(seen), 20_000);
  const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)![1]);
  return { child, result, port };
}

async function startWatcher(project: string, apiUrl: string) {
  const root = await tempDir();
  const run = await startCli(
    [
      "watch",
      "--project-id",
      project,
      "--api-url",
      apiUrl,
      "--root",
      root,
      "--debounce",
      "30",
      "--max-wait",
      "200",
      "--flush-timeout",
      "60000",
      "--verbose",
    ],
    { timeoutMs: 120_000 },
  );
  await waitForOutput(run.child.stderr, (text) => /ready in/.test(text), 20_000);
  return { root, ...run };
}

async function writeRound(root: string, round: number): Promise<void> {
  await mkdir(join(root, `r${round}`), { recursive: true });
  for (let i = 0; i < 8; i++) await writeFile(join(root, `r${round}`, `f${i}.txt`), `round ${round} file ${i}\n`);
  await writeFile(join(root, "shared.txt"), `edited in round ${round}\n`);
}

async function treeOf(root: string): Promise<Record<string, string>> {
  const tree: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name).slice(root.length + 1);
    if (path.startsWith(".uspark")) continue;
    tree[path] = createHash("sha256")
      .update(await readFile(join(root, path)))
      .digest("hex");
  }
  return tree;
}

async function remoteOf(apiUrl: string, project: string): Promise<{ version: number; tree: Record<string, string> }> {
  const body = (await (await fetch(`${apiUrl}/api/projects/${project}/files`)).json()) as {
    version: number;
    files: { path: string; sha256: string }[];
  };
  return { version: body.version, tree: Object.fromEntries(body.files.map((f) => [f.path, f.sha256])) };
}

it("keeps every watcher's edits, applied once, when one of two replicas is killed mid-run", async () => {
  const databaseUrl = await pg().freshSchemaUrl();
  const replicas = [await serveReplica(databaseUrl), await serveReplica(databaseUrl)];
  const proxy = await roundRobinProxy(replicas.map((r) => ({ host: "127.0.0.1", port: r.port })));
  onTestFinished(() => proxy.close());

  for (const project of PROJECTS) await createProject(proxy.url, project);
  const watchers = await Promise.all(PROJECTS.map((project) => startWatcher(project, proxy.url)));
  await Promise.all(watchers.map((w) => writeRound(w.root, 1)));
  await eventually(async () => {
    const versions = await Promise.all(PROJECTS.map(async (p) => (await remoteOf(proxy.url, p)).version));
    return versions.every((v) => v >= 1);
  }, 30_000);

  await Promise.all(watchers.map((w) => writeRound(w.root, 2)));
  expect(proxy.connections[0]).toBeGreaterThan(0); // the replica about to die was serving
  replicas[0]!.child.kill("SIGKILL"); // while round 2 is being pushed
  await Promise.all(watchers.map((w) => writeRound(w.root, 3)));
  for (const w of watchers) w.child.stdin.end();

  const results = await Promise.all(watchers.map((w) => w.result));
  expect(
    results.map((r) => r.code),
    results.map((r) => r.stderr).join("\n---\n"),
  ).toEqual([0, 0, 0, 0]);

  for (const [i, project] of PROJECTS.entries()) {
    const remote = await remoteOf(proxy.url, project);
    expect(remote.tree, project).toEqual(await treeOf(watchers[i]!.root));
  }

  const schema = decodeURIComponent(new URL(databaseUrl).searchParams.get("options")!).split("=")[1];
  const { rows } = await pg().admin.query<{ project: string; version: string; key: string; changes: unknown }>(
    `SELECT project, version, key, changes FROM ${schema}.commits ORDER BY project, version`,
  );
  for (const project of PROJECTS) {
    const commits = rows.filter((r) => r.project === project);
    // Versions 1..N with no gap, each Idempotency-Key once, no commit applied again under another key.
    expect(commits.map((c) => Number(c.version))).toEqual(commits.map((_, i) => i + 1));
    expect(new Set(commits.map((c) => c.key)).size).toBe(commits.length);
    for (let i = 1; i < commits.length; i++) expect(commits[i]!.changes).not.toEqual(commits[i - 1]!.changes);
    const { version } = await remoteOf(proxy.url, project);
    expect(version).toBe(commits.length);
  }
}, 180_000);
