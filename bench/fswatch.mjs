#!/usr/bin/env node
// File system watcher benchmark: ready time, peak RSS, idle CPU and the `mkdir -p x && echo > x/f`
// case for chokidar 5, raw @parcel/watcher and uspark's own startFsWatcher (dist/fswatch/index.js, so
// build first), on a generated tree of 50,000 files in 5,000 directories plus an ignored
// node_modules of 100,000 files. Each candidate runs in its own process, one after the other.
//
//   node bench/fswatch.mjs            the full tree (about a minute)
//   node bench/fswatch.mjs --smoke    a few hundred files, a few seconds
//   node bench/fswatch.mjs --only uspark,parcel
//
// The last line of output is one JSON object with every figure, for a bench runner.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateTree } from "./fswatch-tree.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const require = createRequire(path.join(repo, "package.json"));

export const SIZES = {
  full: { dirs: 5000, files: 50000, nmDirs: 10000, nmFiles: 100000 },
  smoke: { dirs: 20, files: 200, nmDirs: 10, nmFiles: 100 },
};

export const CANDIDATES = ["chokidar", "chokidar-poll", "parcel", "uspark", "uspark-poll"];
const IGNORED = /(^|[/\\])(node_modules|\.git|\.uspark)([/\\]|$)/;
const POLL_MS = 1000;
const TRIALS = 5;

/** Runs the benchmark and returns its results; `log` gets the human-readable lines. */
export async function runFsWatchBench({ smoke = false, only = CANDIDATES, log = console.log } = {}) {
  const size = smoke ? SIZES.smoke : SIZES.full;
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-fswatch-bench-")));
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    const started = performance.now();
    generateTree(root, size);
    log(
      `tree: ${size.files} files in ${size.dirs} directories + node_modules of ${size.nmFiles} files (${Math.round(performance.now() - started)} ms to generate) in ${root}`,
    );
    const results = {};
    for (const name of only) {
      results[name] = await runChild(name, root, smoke ? 30_000 : 180_000);
      log(`  ${name}: ${JSON.stringify(results[name])}`);
    }
    log("");
    log(table(results));
    return { bench: "fswatch", smoke, tree: size, node: process.version, cpus: os.cpus().length, results };
  } finally {
    cleanup();
  }
}

function table(results) {
  const rows = [
    ["candidate", "ready ms", "peak RSS MiB", "idle CPU %", "mkdir x+write x/f", "mkdir -p a/b/c+write", "later write in a/b/c", "edit"],
  ];
  for (const [name, r] of Object.entries(results)) {
    if (r.error) rows.push([name, r.error, "", "", "", "", "", ""]);
    else
      rows.push([
        name,
        String(r.readyMs),
        String(r.peakRssMiB),
        String(r.idleCpuPct),
        of(r.mkdirCaught),
        of(r.deepCaught),
        of(r.laterCaught),
        r.editCaught ? "caught" : "MISSED",
      ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join("  ")).join("\n");
}

const of = (caught) => `${caught}/${TRIALS} caught`;

function runChild(name, root, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", name, root], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split("\n").pop() ?? "";
      try {
        resolve(JSON.parse(last));
      } catch {
        resolve({ error: signal === "SIGKILL" ? `timeout after ${timeoutMs} ms` : `exit ${code ?? signal}` });
      }
    });
  });
}

// ── one candidate, in its own process ───────────────────────────────────────────────────────

async function child(name, root) {
  const seen = new Set();
  let waiters = [];
  const saw = (file) => {
    seen.add(path.resolve(file));
    for (const waiter of waiters) waiter();
  };
  const waitFor = (file, ms) =>
    new Promise((resolve) => {
      const target = path.join(root, file);
      if (seen.has(target)) return resolve(true);
      const timer = setTimeout(() => done(false), ms);
      const check = () => seen.has(target) && done(true);
      const done = (value) => {
        clearTimeout(timer);
        waiters = waiters.filter((waiter) => waiter !== check);
        resolve(value);
      };
      waiters.push(check);
    });

  const importStart = performance.now();
  const start = await load(name);
  const importMs = Math.round(performance.now() - importStart);
  const readyStart = performance.now();
  const watcher = await start(root, saw);
  const readyMs = Math.round(performance.now() - readyStart);
  const rssAfterReadyMiB = mib(process.memoryUsage().rss);

  // Idle cost: what watching costs while nothing happens (polling is not free).
  const cpuBefore = process.cpuUsage();
  const idleStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, smokeOrFull(root) ? 500 : 3000));
  const cpu = process.cpuUsage(cpuBefore);
  const idleCpuPct = Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - idleStart)) * 1000) / 10;

  const wait = name.endsWith("poll") ? 2 * POLL_MS + 1000 : 2000;
  // Each case is a race with the watcher: run it a few times, count the catches.
  let mkdirCaught = 0;
  let deepCaught = 0;
  let laterCaught = 0;
  for (let trial = 0; trial < TRIALS; trial++) {
    // The case, as a shell runs it.
    sh(`mkdir -p gen/${name}-${trial} && echo > gen/${name}-${trial}/f`, root);
    if (await waitFor(`gen/${name}-${trial}/f`, wait)) mkdirCaught++;
    // Deeper: every directory of `mkdir -p` must be watched, not only the first.
    sh(`mkdir -p new${trial}/${name}/y/z && echo > new${trial}/${name}/y/z/f`, root);
    if (await waitFor(`new${trial}/${name}/y/z/f`, wait)) deepCaught++;
    // A moment later, in the deepest one: is it watched at all?
    sh(`echo > new${trial}/${name}/y/z/later`, root);
    if (await waitFor(`new${trial}/${name}/y/z/later`, wait)) laterCaught++;
  }
  sh(`echo edit >> src/a0/b0/f0.ts`, root);
  const editCaught = await waitFor(`src/a0/b0/f0.ts`, wait);

  let pollRoundMs;
  if (watcher.pollRound) pollRoundMs = await watcher.pollRound();
  await watcher.close();
  return {
    importMs,
    readyMs,
    peakRssMiB: peakRssMiB(),
    rssAfterReadyMiB,
    idleCpuPct,
    mkdirCaught,
    deepCaught,
    laterCaught,
    editCaught,
    ...(pollRoundMs !== undefined ? { pollRoundMs } : {}),
  };
}

let smokeTree;
function smokeOrFull(root) {
  // A smoke tree is small: time is better spent elsewhere.
  smokeTree ??= execFileSync("find", [path.join(root, "src"), "-maxdepth", "1"], { encoding: "utf8" }).split("\n").length < 20;
  return smokeTree;
}

/** Each loader returns `start(root, onPath)` resolving, once the candidate is ready, to `{ close() }`. */
async function load(name) {
  switch (name) {
    case "chokidar":
    case "chokidar-poll": {
      const { watch } = await import(pathToFileURL(require.resolve("chokidar")).href);
      return (root, onPath) =>
        new Promise((resolve, reject) => {
          // As uspark would use it: nothing reported for the initial files, ignored dirs not entered.
          const watcher = watch(root, {
            ignoreInitial: true,
            followSymlinks: false,
            usePolling: name === "chokidar-poll",
            interval: POLL_MS,
            ignored: (file) => IGNORED.test(path.relative(root, file)),
          });
          for (const event of ["add", "change", "unlink"]) watcher.on(event, onPath);
          watcher.on("error", reject);
          watcher.on("ready", () => resolve({ close: () => watcher.close() }));
        });
    }
    case "parcel": {
      const parcel = require("@parcel/watcher");
      return async (root, onPath) => {
        const subscription = await parcel.subscribe(
          root,
          (error, events) => {
            if (!error) for (const event of events) onPath(event.path);
          },
          { ignore: ["**/node_modules", "**/.git", "**/.uspark"] },
        );
        return { close: () => subscription.unsubscribe() };
      };
    }
    case "uspark":
    case "uspark-poll": {
      const { startFsWatcher } = await import(pathToFileURL(path.join(repo, "dist", "fswatch", "index.js")).href);
      const { Reporter } = await import(pathToFileURL(path.join(repo, "dist", "report", "reporter.js")).href);
      return async (root, onPath) => {
        const watcher = startFsWatcher({
          root,
          poll: name === "uspark-poll" ? POLL_MS : undefined,
          report: new Reporter({ stream: process.stderr }),
          onChange: (change) => onPath(change.path),
        });
        await watcher.ready;
        return {
          close: () => watcher.close(),
          // How long one round over the whole tree takes (settle runs one at once).
          pollRound:
            name === "uspark-poll"
              ? async () => {
                  const t = performance.now();
                  await watcher.settle({ quietMs: 0, maxMs: 60_000 });
                  return Math.round(performance.now() - t);
                }
              : undefined,
        };
      };
    }
    default:
      throw new Error(`unknown candidate ${name}; known: ${CANDIDATES.join(", ")}`);
  }
}

function sh(command, cwd) {
  execFileSync("sh", ["-c", command], { cwd });
}

function peakRssMiB() {
  try {
    const kib = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
    if (kib > 0) return Math.round(kib / 1024);
  } catch {
    // Not Linux: the RSS now is the best there is.
  }
  return mib(process.memoryUsage().rss);
}

const mib = (bytes) => Math.round(bytes / 1024 / 1024);

// ── command line ────────────────────────────────────────────────────────────────────────────

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  if (args[0] === "--child") {
    const result = await child(args[1], args[2]).catch((error) => ({ error: String(error?.message ?? error) }));
    process.stdout.write(JSON.stringify(result) + "\n");
    process.exit(0);
  }
  const onlyIndex = args.indexOf("--only");
  const only = onlyIndex >= 0 ? args[onlyIndex + 1].split(",") : CANDIDATES;
  const result = await runFsWatchBench({ smoke: args.includes("--smoke"), only });
  console.log(JSON.stringify(result));
}
