// The transfer part of bench/run.mjs: `uspark push` of N changed files and `uspark pull` of them
// into an empty directory, the built CLI against the reference server on 127.0.0.1 with its
// answers delayed by 0 ms and by `latencyMs` (the server's latency option: a far server without
// leaving the machine). Blob packs (API v1.1) make the request count independent of N.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { randomSource } from "./claude-session.mjs";
import { randomBytes } from "node:crypto";
import { createProject, median, peakRss, sh, untilExit } from "./measure.mjs";

const PROJECT = "bench-transfer";

/**
 * A push and a pull of `files` files per latency, `rounds` times (the latencies taking turns, so
 * that a busy moment of the machine does not land on one of them), by the CLI at `bin` against
 * the reference server of `repo`; the median seconds of each, and the requests.
 */
export async function measureTransfer({ repo, bin, work, files = 1000, latencies = [0, 50], rounds = 3, seed = 5 }) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const all = latencies.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, latencyMs] of latencies.entries()) all[i].push(await pushAndPull({ startServer, bin, work, files, latencyMs, seed }));
  }
  return all.map((runs, i) => ({
    latencyMs: latencies[i],
    files,
    rounds,
    push: { ...runs[0].push, seconds: median(runs.map((r) => r.push.seconds)) },
    pull: { ...runs[0].pull, seconds: median(runs.map((r) => r.pull.seconds)) },
  }));
}

async function pushAndPull({ startServer, bin, work, files, latencyMs, seed }) {
  const dir = path.join(work, `transfer-${latencyMs}ms`);
  const source = path.join(dir, "source");
  const target = path.join(dir, "target");
  const contents = writeTree(source, files, seed);
  mkdirSync(target, { recursive: true });
  const requests = [];
  const server = await startServer({
    dataDir: path.join(dir, "data"),
    port: 0,
    host: "127.0.0.1",
    latencyMs,
    quiet: true,
    onRequest: (event) => requests.push(event),
  });
  try {
    await createProject(server.url, PROJECT);
    const connection = ["--project-id", PROJECT, "--api-url", server.url, "--quiet"];
    const push = await timed([bin, "push", ...connection, "--root", source], requests);
    const pull = await timed([bin, "pull", ...connection, "--root", target], requests);
    for (const [rel, text] of contents) {
      if (readFileSync(path.join(target, rel), "utf8") !== text) throw new Error(`pulled ${rel} differs from what was pushed`);
    }
    return { push, pull };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function writeTree(root, files, seed) {
  const r = randomSource(seed);
  const contents = new Map();
  for (let i = 0; i < files; i++) {
    const rel = `src/dir${i % 20}/file${i}.ts`;
    const text = r.code(10 + Math.floor(r.rand() * 60)) + "\n";
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
    contents.set(rel, text);
  }
  return contents;
}

/** Runs the CLI (`args`: its bin and arguments); its wall time and the requests the server answered meanwhile, by kind. */
async function timed(args, requests) {
  const first = requests.length;
  const seconds = (await untilExit(args)) / 1000;
  const kinds = {};
  for (const { method, url } of requests.slice(first)) {
    const kind = `${method} ${url.replace(/^.*\/api\/projects\/[^/]+/, "").replace(/[0-9a-f]{64}/, "{sha}")}`;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return { seconds, requests: requests.length - first, kinds };
}

/**
 * Peak RSS of `uspark push` of `files` files of `fileBytes` random bytes each, and of the `uspark
 * pull` of them into an empty directory (blob packs both ways), against the reference server.
 */
export async function measureTransferMemory({ repo, bin, work, files = 200, fileBytes = 512 * 1024 }) {
  const { startServer } = await import(pathToFileURL(path.join(repo, "dist", "server", "index.js")).href);
  const dir = path.join(work, "transfer-memory");
  const [source, target] = [path.join(dir, "source"), path.join(dir, "target")];
  for (let i = 0; i < files; i++) {
    mkdirSync(path.join(source, "data"), { recursive: true });
    writeFileSync(path.join(source, "data", `blob${i}.bin`), randomBytes(fileBytes));
  }
  mkdirSync(target, { recursive: true });
  const server = await startServer({ dataDir: path.join(dir, "data"), port: 0, host: "127.0.0.1", quiet: true });
  try {
    await createProject(server.url, PROJECT);
    const rssFile = path.join(dir, "rss");
    const preload = `${sh(process.execPath)} --import ${sh(path.join(path.dirname(new URL(import.meta.url).pathname), "peak-rss.mjs"))} ${sh(bin)}`;
    const connection = `--project-id ${PROJECT} --api-url ${sh(server.url)} --quiet`;
    const push = await peakRss(`${preload} push ${connection} --root ${sh(source)}`, rssFile);
    const pull = await peakRss(`${preload} pull ${connection} --root ${sh(target)}`, rssFile);
    return { files, bytes: files * fileBytes, push, pull };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
