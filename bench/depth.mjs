#!/usr/bin/env node
// Scan time against directory depth (issue 22: "600 levels take 43 s, 3,000 levels do not finish
// in 10 minutes; a SIGTERM does not cut a scan short"). A chain of N nested directories, one small
// file in each, is scanned by `uspark push --dry-run` against the reference server (the built
// CLI); and `uspark watch --no-stdin` is sent SIGTERM while its start scan of the deepest tree
// runs, to time how soon it exits. Linux's PATH_MAX (4096 bytes) ends the walk at about 2,000
// levels with a warning: deeper files cannot be opened by path at all.
//
//   node bench/depth.mjs [--bin PATH] [--depths 150,300,600,3000] [--cap SECONDS] [--json]
//     --bin    another build's bin/uspark.js (an older checkout's, for the before figures)
//     --cap    a run still going after this long is stopped and shown as "> cap" (default 60)
//     --json   print one JSON line of the figures last (bench/run.mjs reads it)

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createProject, serve } from "./lib/server-commits.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, otherwise) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? otherwise : args[i + 1];
};
const bin = path.resolve(option("bin", path.join(here, "..", "bin", "uspark.js")));
const depths = option("depths", "150,300,600,3000").split(",").map(Number);
const capSeconds = Number(option("cap", "60"));
const print = (text) => process.stdout.write(text + "\n");

/** `depth` nested directories `d/d/d/…` under `root`, a file in each; made by relative paths, as PATH_MAX allows no other way. */
function makeChain(root, depth) {
  const home = process.cwd();
  mkdirSync(root);
  process.chdir(root);
  try {
    for (let level = 0; level < depth; level++) {
      writeFileSync("f.txt", `level ${level}\n`);
      mkdirSync("d");
      process.chdir("d");
    }
  } finally {
    process.chdir(home);
  }
}

/** Runs the CLI; resolves with its wall seconds (undefined past the cap) and its exit code. */
function timed(cliArgs, { signalAfterMs } = {}) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...cliArgs], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let signalledAt;
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const cap = setTimeout(() => child.kill("SIGKILL"), capSeconds * 1000);
    const signal =
      signalAfterMs === undefined ? undefined : setTimeout(() => ((signalledAt = performance.now()), child.kill("SIGTERM")), signalAfterMs);
    child.once("exit", (code, killed) => {
      clearTimeout(cap);
      clearTimeout(signal);
      const from = signalledAt ?? started;
      const seconds = killed === "SIGKILL" ? undefined : (performance.now() - from) / 1000;
      resolve({ seconds, code, stderr });
    });
  });
}

const shown = (seconds) => (seconds === undefined ? `> ${capSeconds} s` : `${seconds.toFixed(2)} s`);

const work = realpathSync(mkdtempSync(path.join(os.tmpdir(), "uspark-depth-")));
const server = await serve(bin, ["--data", path.join(work, "data")]);
const figures = [];
try {
  await createProject(server.url, "depth");
  const connection = ["--project-id", "depth", "--api-url", server.url, "--quiet"];
  print(`depth bench: ${bin}`);
  for (const depth of depths) {
    const root = path.join(work, `chain-${depth}`);
    makeChain(root, depth);
    const scan = await timed(["push", "--dry-run", "--root", root, ...connection]);
    figures.push({ name: `push --dry-run scan, depth ${depth}`, depth, seconds: scan.seconds ?? null, code: scan.code });
    print(`  push --dry-run, ${String(depth).padStart(5)} levels   ${shown(scan.seconds).padStart(10)}   exit ${scan.code ?? "killed"}`);
  }
  const deepest = path.join(work, `chain-${Math.max(...depths)}`);
  const stop = await timed(["watch", "--no-stdin", "--flush-timeout", "2000", "--root", deepest, ...connection], { signalAfterMs: 1000 });
  figures.push({
    name: "SIGTERM during the start scan to exit",
    depth: Math.max(...depths),
    seconds: stop.seconds ?? null,
    code: stop.code,
  });
  print(
    `  watch --no-stdin, SIGTERM 1 s into the start scan of ${Math.max(...depths)} levels: exit after ${shown(stop.seconds)} (exit ${stop.code ?? "killed"})`,
  );
} finally {
  await server.stop();
  // rm -rf walks by descriptor: Node's rmSync would meet PATH_MAX in the deepest chain.
  spawnSync("rm", ["-rf", work]);
}
if (args.includes("--json")) print(JSON.stringify({ bin, capSeconds, figures }));
