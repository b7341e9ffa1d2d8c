// Monorepo scale (issue 45): uspark and git side by side on ONE generated tree
// (monorepo-tree.mjs). Git works from a separate --git-dir (nothing of it in the tree) and pushes
// to a bare repository; uspark pushes to `uspark serve --data` and `--db` child processes. Each
// round runs git and uspark back to back (a noisy machine hits both alike); the figures are medians.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { endToExit } from "./exit-time.mjs";
import { median, sh, timeShell } from "./measure.mjs";
import { writeMonorepoTree } from "./monorepo-tree.mjs";
import { topSelfTime } from "./profile.mjs";

const here = path.dirname(new URL(import.meta.url).pathname);
const RSS_PRELOAD = path.join(here, "peak-rss.mjs");
const PLAIN_WALK = `const fs=require("fs"),p=require("path");let n=0;const w=(d)=>{for(const e of fs.readdirSync(d,{withFileTypes:true})){if(e.name===".uspark")continue;if(e.isDirectory())w(p.join(d,e.name));else n++}};const t=performance.now();w(process.argv[1]);console.error(JSON.stringify({files:n,ms:performance.now()-t}))`;
const GIT_ENV = {
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  HOME: "/nonexistent",
};

/** Starts `uspark serve <args> --port 0` (node flags first: --cpu-prof); resolves with its URL and a stop function. */
export function serve(bin, args, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, bin, "serve", ...args, "--port", "0", "--quiet"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let text = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve ${args.join(" ")} did not start in 60 s:\n${text}`)), 60_000);
    child.stderr.on("data", (chunk) => {
      text += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        stop: () => new Promise((done) => (child.exitCode !== null ? done() : (child.once("exit", done), child.kill("SIGTERM")))),
      });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}:\n${text}`)));
  });
}

async function createProject(url, id) {
  const res = await fetch(`${url}/api/projects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id }),
  });
  if (res.status !== 201) throw new Error(`creating project ${id} answered ${res.status}: ${await res.text()}`);
}

/** The files of project `id` on the server at `url`: how many, to check a push sent them all. */
async function remoteFileCount(url, id) {
  const res = await fetch(`${url}/api/projects/${id}/files`);
  if (!res.ok) throw new Error(`GET files of ${id} answered ${res.status}`);
  return (await res.json()).files.length;
}

/** Git on `tree` with its repository in `gitDir`, pushing to `bare`. */
function gitOf(tree, gitDir, bare) {
  const git = `git --git-dir=${sh(gitDir)} --work-tree=${sh(tree)}`;
  return {
    init() {
      rmSync(gitDir, { recursive: true, force: true });
      rmSync(bare, { recursive: true, force: true });
      spawnSync("git", ["init", "-q", "--bare", bare], { env: { ...process.env, ...GIT_ENV } });
      spawnSync("git", [`--git-dir=${gitDir}`, `--work-tree=${tree}`, "init", "-q", "-b", "main"], { env: { ...process.env, ...GIT_ENV } });
      writeFileSync(path.join(gitDir, "info", "exclude"), ".uspark/\n");
    },
    /** add + commit + push: the whole of git's first push and of an edit's. */
    push: (message) =>
      timeShell(`${git} add -A && ${git} commit -q -m ${sh(message)} && ${git} push -q ${sh(bare)} main`, {
        env: { ...process.env, ...GIT_ENV },
      }),
    status: () => timeShell(`${git} status --porcelain >/dev/null`, { env: { ...process.env, ...GIT_ENV } }),
  };
}

/** Runs the CLI (peak RSS preloaded); resolves with { seconds, rssBytes }. */
async function uspark(bin, args, rssFile, nodeArgs = []) {
  rmSync(rssFile, { force: true });
  const command = [process.execPath, "--import", RSS_PRELOAD, ...nodeArgs, bin, ...args].map(sh).join(" ");
  // status exits 1 when something is not in sync: the bench asks it of a synced tree, so 0 is due.
  const seconds = await timeShell(command, { env: { ...process.env, USPARK_BENCH_RSS_FILE: rssFile } });
  const rssBytes = Number(readFileSync(rssFile, "utf8"));
  return { seconds, rssBytes };
}

/** Where a first push goes: a fresh server (its own data dir, or a fresh schema) and an empty project in it. */
async function freshServer(bin, store, { work, round, pg, nodeArgs, lite }) {
  if (store === "data") {
    const dataDir = path.join(work, `data-${round}`);
    rmSync(dataDir, { recursive: true, force: true });
    const server = lite ? await inProcess(bin, dataDir) : await serve(bin, ["--data", dataDir], nodeArgs);
    return { ...server, stop: async () => (await server.stop(), rmSync(dataDir, { recursive: true, force: true })) };
  }
  const db = await pg.freshSchemaUrl();
  if (store === "db") return serve(bin, ["--db", db], nodeArgs);
  // "db2": two replicas on one database behind a round-robin balancer of the bench's own.
  const replicas = [await serve(bin, ["--db", db], nodeArgs), await serve(bin, ["--db", db], nodeArgs)];
  const balancer = await roundRobin(replicas.map((replica) => replica.url));
  return { url: balancer.url, stop: async () => (await balancer.close(), await Promise.all(replicas.map((replica) => replica.stop()))) };
}

/** The build's server in this process (the smoke run: a node start less). */
async function inProcess(bin, dataDir) {
  const { startServer } = await import(pathToFileURL(path.join(path.dirname(bin), "..", "dist", "server", "index.js")).href);
  const server = await startServer({ dataDir, port: 0, host: "127.0.0.1", quiet: true });
  return { url: server.url, stop: () => server.close() };
}

/** An HTTP proxy on 127.0.0.1 that sends each request to the next of `urls` in turn. */
async function roundRobin(urls) {
  const agent = new http.Agent({ keepAlive: true });
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = new URL(req.url, urls[next++ % urls.length]);
    const upstream = http.request(target, { method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.once("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => (agent.destroy(), new Promise((resolve) => server.close(resolve))),
  };
}

/**
 * The first pushes: each round, git's add+commit+push of the tree into a fresh repository, then
 * `uspark push` of it into an empty project on each store. Leaves the tree synced with the last
 * --data server (returned running, with the git repository of the last round).
 */
async function firstPushes(ctx, stores) {
  const { bin, tree, work, rounds, files } = ctx;
  const times = { git: [], ...Object.fromEntries(stores.map((s) => [s, []])) };
  let rss = 0;
  let kept;
  for (let round = 0; round < rounds; round++) {
    ctx.git.init();
    times.git.push(await ctx.git.push("first"));
    for (const store of stores) {
      const server = await freshServer(bin, store, { ...ctx, round });
      const last = round === rounds - 1 && store === "data";
      try {
        await createProject(server.url, "mono");
        rmSync(path.join(tree, ".uspark"), { recursive: true, force: true });
        const run = await uspark(bin, ["push", "--project-id", "mono", "--api-url", server.url, "--root", tree, "--quiet"], ctx.rssFile);
        const count = await remoteFileCount(server.url, "mono");
        if (count !== files) throw new Error(`the first push to --${store} left ${count} files on the server, not ${files}`);
        times[store].push(run.seconds);
        rss = Math.max(rss, run.rssBytes);
      } finally {
        if (last) kept = server;
        else await server.stop();
      }
    }
  }
  return { times, rss, server: kept };
}

/** `git status` and `uspark status` of the synced tree, interleaved. */
async function statuses(ctx, url) {
  const times = { git: [], uspark: [] };
  let rss = 0;
  for (let round = 0; round < ctx.rounds; round++) {
    times.git.push(await ctx.git.status());
    const run = await uspark(ctx.bin, ["status", "--project-id", "mono", "--api-url", url, "--root", ctx.tree, "--quiet"], ctx.rssFile);
    times.uspark.push(run.seconds);
    rss = Math.max(rss, run.rssBytes);
  }
  return { times, rss };
}

/** One file edited (a line appended), then git's add+commit+push and `uspark push` of it, interleaved. */
async function oneEdits(ctx, url, paths) {
  const times = { git: [], uspark: [] };
  for (let round = 0; round < ctx.rounds; round++) {
    appendFileSync(path.join(ctx.tree, paths[(round * 7919) % paths.length]), `// edit ${round}\n`);
    times.git.push(await ctx.git.push(`edit ${round}`));
    times.uspark.push(
      (await uspark(ctx.bin, ["push", "--project-id", "mono", "--api-url", url, "--root", ctx.tree, "--quiet"], ctx.rssFile)).seconds,
    );
  }
  return times;
}

/** `uspark watch` on the synced tree: spawn to ready (its first walk done) against a plain walk, and the end of stdin to the exit with nothing pending. */
async function watches(ctx, url) {
  const times = { walk: [], ready: [], exit: [] };
  const args = [ctx.bin, "watch", "--project-id", "mono", "--api-url", url, "--root", ctx.tree, "--verbose", "--log-format", "json"];
  for (let round = 0; round < ctx.rounds; round++) {
    const walk = spawnSync(process.execPath, ["-e", PLAIN_WALK, ctx.tree], { encoding: "utf8" });
    times.walk.push(JSON.parse(walk.stderr.trim().split("\n").pop()).ms / 1000);
    const onScan = (_record, ms) => times.ready.push(ms / 1000);
    times.exit.push((await endToExit(args, { scan: "ready", timeoutMs: 600_000, onScan })) / 1000);
  }
  return times;
}

/** The end of stdin to the exit of `uspark watch` on a small project (20 files) in sync. */
async function smallExit(ctx, url) {
  const small = path.join(ctx.work, "small");
  writeMonorepoTree(small, 20, { seed: 2 });
  await createProject(url, "small");
  const connection = ["--project-id", "small", "--api-url", url, "--root", small];
  await uspark(ctx.bin, ["push", ...connection, "--quiet"], ctx.rssFile);
  const exits = [];
  for (let round = 0; round < ctx.rounds; round++) {
    exits.push((await endToExit([ctx.bin, "watch", ...connection, "--verbose", "--log-format", "json"], { scan: "ready" })) / 1000);
  }
  return exits;
}

/** One more first push of each store under --cpu-prof (client and server): where the time goes, by function. */
async function profiles(ctx, stores, profileDir) {
  const found = {};
  for (const store of stores) {
    const dir = path.join(profileDir, `first-push-${store}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(path.join(dir, "server"), { recursive: true });
    mkdirSync(path.join(dir, "client"), { recursive: true });
    const server = await freshServer(ctx.bin, store, {
      ...ctx,
      round: "profile",
      nodeArgs: ["--cpu-prof", "--cpu-prof-dir", path.join(dir, "server")],
    });
    let seconds;
    try {
      await createProject(server.url, "mono");
      rmSync(path.join(ctx.tree, ".uspark"), { recursive: true, force: true });
      const args = ["push", "--project-id", "mono", "--api-url", server.url, "--root", ctx.tree, "--quiet"];
      ({ seconds } = await uspark(ctx.bin, args, ctx.rssFile, ["--cpu-prof", "--cpu-prof-dir", path.join(dir, "client")]));
    } finally {
      await server.stop(); // the profile is written at the exit
    }
    const top = (side) => {
      const file = readdirSync(path.join(dir, side)).find((name) => name.endsWith(".cpuprofile"));
      return file ? { file: path.join(dir, side, file), top: topSelfTime(path.join(dir, side, file), 12) } : undefined;
    };
    found[store] = { seconds, server: top("server"), client: top("client") };
  }
  return found;
}

/**
 * Everything of the section; resolves with the raw samples and medians. `pg`: { freshSchemaUrl }
 * of a running cluster (undefined: no --db rows); `replicas`: also a first push through two --db
 * replicas behind a round-robin balancer. `lite` (the smoke run, part of the test suite): the
 * --data store alone, and no watch (the scale and exit sections run those). `profileDir`: also
 * profile a first push of each store.
 */
export async function measureMonorepo({ bin, work, files, rounds, pg, replicas = false, lite = false, profileDir, onProgress = () => {} }) {
  const tree = path.join(work, "tree");
  const started = performance.now();
  const paths = writeMonorepoTree(tree, files);
  onProgress(`generated ${files} files in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const ctx = {
    bin,
    tree,
    work,
    rounds,
    files,
    pg,
    lite,
    rssFile: path.join(work, "rss"),
    git: gitOf(tree, path.join(work, "git"), path.join(work, "bare.git")),
  };
  // --data last: the tree's state is then that server's, which the later rows use.
  const stores = pg && !lite ? [...(replicas ? ["db2"] : []), "db", "data"] : ["data"];
  const first = await firstPushes(ctx, stores);
  try {
    onProgress("first pushes done");
    const status = await statuses(ctx, first.server.url);
    const edit = await oneEdits(ctx, first.server.url, paths);
    const watch = lite ? undefined : await watches(ctx, first.server.url);
    const exitSmall = lite ? undefined : await smallExit(ctx, first.server.url);
    const profile = profileDir
      ? await profiles(
          ctx,
          stores.filter((store) => store !== "db2"),
          profileDir,
        )
      : undefined;
    const med = (samples) => Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]));
    return {
      files,
      rounds,
      samples: { firstPush: first.times, status: status.times, edit, watch, exitSmall },
      firstPush: med(first.times),
      status: med(status.times),
      edit: med(edit),
      watch: watch && med(watch),
      exitSmall: exitSmall && median(exitSmall),
      rssBytes: { firstPush: first.rss, status: status.rss },
      profile,
    };
  } finally {
    await first.server.stop();
  }
}
