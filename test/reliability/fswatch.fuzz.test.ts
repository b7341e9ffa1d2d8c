// File-tree fuzzing (issue 15): seeded random sequences of shell operations (create, edit,
// rename, rm -rf, mkdir reusing a name, .gitignore changes, a burst past the inotify queue)
// against the built CLI with its file watcher on and the reference server on loopback. The
// remote must come to equal the tree minus what git itself says is ignored through the file
// watcher alone, before the input ends (no periodic rescan, the start-up scans done before the
// first step): the end scan would sync whatever the watcher missed and hide it. At exit too.

import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCli, waitForOutput } from "../kit/cli.js";
import { remoteFiles, startMemoryRef, type RefServer } from "../kit/sync.js";
import { SOAK, TIMEOUT_MS } from "./harness.js";
import { rng } from "./session.js";

/** npm test: two seeds that failed on the old main (2, 7), a small burst; npm run soak: four seeds (all four lose files on the old main), 300 steps, a burst past the kernel's queue. USPARK_FUZZ_SEEDS=1,2 picks them. */
const SEEDS = (process.env.USPARK_FUZZ_SEEDS?.split(",").map(Number) ?? (SOAK ? [1, 2, 4, 7] : [2, 7])).filter((seed) => seed > 0);
const STEPS = SOAK ? 300 : 60;
const BURST_FILES = SOAK ? Math.max(25_000, maxQueuedEvents() + 8000) : 1500;
/** How long the watcher and the sync get to bring the remote to the tree once the steps are done. */
const CATCH_UP_MS = SOAK ? 300_000 : 60_000;

const DIRS = ["a", "b", "a/c", "tmp", "b/d"];
const NAMES = ["f0.ts", "f1.ts", "notes.md", "app.log", "keep.log", ".env", "x.pem"];
const RULES = ["*.log", "!keep.log", "/.env", "tmp/", "b/d/", "*.pem", "/a/f1.ts", "c/", "# comment", "notes.*"];
/** Never matched by a rule in RULES: the burst's files must all arrive. */
const BURST_DIR = "burst";

let server: RefServer | undefined;
let root: string | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await server?.stop();
  for (const dir of [root, scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  root = undefined;
  scratch = undefined;
});

function maxQueuedEvents(): number {
  try {
    return Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim()) || 16384;
  } catch {
    return 16384;
  }
}

/** Every regular file under the root but .git/, .uspark/ and `skip` (a top-level name), root-relative. */
function treeFiles(dir: string, skip?: string, rel = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.name === ".git" || entry.name === ".uspark" || child === skip) continue;
    if (entry.isDirectory()) out.push(...treeFiles(dir, skip, child));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

/** The paths git says are ignored (a negated match is not ignored). */
function gitIgnored(dir: string, rels: string[]): Set<string> {
  if (rels.length === 0) return new Set();
  // Exit status 1 means "none of them is ignored"; the output says the same.
  const answer = spawnSync("git", ["check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"], {
    cwd: dir,
    input: rels.join("\0") + "\0",
    env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, ".no-config"), GIT_CONFIG_NOSYSTEM: "1" },
    maxBuffer: 256 * 1024 * 1024,
  });
  if (answer.status !== 0 && answer.status !== 1) throw new Error(`git check-ignore failed: ${answer.stderr}`);
  const out = answer.stdout.toString();
  const fields = out.split("\0");
  const ignored = new Set<string>();
  for (let i = 0; i + 3 < fields.length; i += 4) if (fields[i] !== "" && !fields[i + 2]!.startsWith("!")) ignored.add(fields[i + 3]!);
  return ignored;
}

/**
 * The paths that were visible (there, and not ignored by git) at one of the looks at the tree
 * taken after each step. git is asked late, and only about the paths that matter (remote paths
 * the tree does not hold): for each set of .gitignore files seen, one `git check-ignore` in a
 * scratch repository holding just those files. What git ignores depends on the path and the rules
 * only (a path's last component, a regular file, is never matched by a directory rule, there or
 * not), so the answers are those of asking in the tree at each step, which started ~35 git
 * processes a seed at ~30 ms of CPU each.
 */
function visibilityLog(scratchDir: string) {
  execFileSync("git", ["init", "-q"], { cwd: scratchDir });
  /** Per set of rules (its .gitignore files' paths and contents): every file seen under it. */
  const looks = new Map<string, { rules: [string, string][]; files: Set<string> }>();
  const known = new Map<string, boolean>();
  let written: string[] = [];
  const useRules = (rules: [string, string][]) => {
    for (const rel of written) rmSync(path.join(scratchDir, rel), { force: true });
    for (const [rel, text] of rules) {
      mkdirSync(path.dirname(path.join(scratchDir, rel)), { recursive: true });
      writeFileSync(path.join(scratchDir, rel), text);
    }
    written = rules.map(([rel]) => rel);
  };
  return {
    look(files: string[], rules: [string, string][]): void {
      const key = JSON.stringify(rules);
      const look = looks.get(key) ?? { rules, files: new Set<string>() };
      looks.set(key, look);
      for (const rel of files) look.files.add(rel);
    },
    /** Which of `rels` were visible at some look. */
    visible(rels: string[]): Set<string> {
      const open = new Set(rels.filter((rel) => !known.has(rel)));
      for (const { rules, files } of looks.values()) {
        const asked = [...open].filter((rel) => files.has(rel));
        if (asked.length === 0) continue;
        useRules(rules);
        const ignored = gitIgnored(scratchDir, asked);
        for (const rel of asked.filter((rel) => !ignored.has(rel))) {
          known.set(rel, true);
          open.delete(rel);
        }
      }
      for (const rel of open) known.set(rel, false);
      return new Set(rels.filter((rel) => known.get(rel)));
    },
  };
}

/** The remote project's version and files as path → sha256 (the listing only: no blob is fetched). */
async function remoteHashes(url: string): Promise<{ version: number; files: Map<string, string> }> {
  const response = await fetch(`${url}/api/projects/p1/files`);
  if (response.status === 404) return { version: 0, files: new Map() }; // nothing committed yet
  const listing = (await response.json()) as { version: number; files: { path: string; sha256: string }[] };
  return { version: listing.version, files: new Map(listing.files.map((file) => [file.path, file.sha256])) };
}

/**
 * Resolves when the project's head is past `version` (the long poll of GET /commits), or after
 * `waitMs`: the remote changes only by a commit, so the listing (1,500 files after the burst) is
 * read again only after one.
 */
async function nextCommit(url: string, version: number, waitMs: number): Promise<void> {
  const response = await fetch(`${url}/api/projects/p1/commits?since=${version}&limit=1&wait=${waitMs}`);
  await response.arrayBuffer();
}

interface Ops {
  dir: string;
  pick<T>(list: readonly T[]): T;
  random: () => number;
  log: string[];
}

function write(ops: Ops, rel: string, content: string): void {
  mkdirSync(path.dirname(path.join(ops.dir, rel)), { recursive: true });
  writeFileSync(path.join(ops.dir, rel), content);
}

/** One random shell-like operation; returns a line for the failure message. */
function step(ops: Ops, n: number, burstDone: { value: boolean }): string {
  const { dir, pick, random } = ops;
  // The burst's directory is not walked at every step (1,500 names read for nothing).
  const files = treeFiles(dir, BURST_DIR).filter((rel) => !rel.endsWith(".gitignore"));
  const roll = random();
  if (roll < 0.3 || files.length === 0) {
    const rel = `${random() < 0.3 ? "" : `${pick(DIRS)}/`}${pick(NAMES)}`;
    write(ops, rel, `created at step ${n}\n`);
    return `create ${rel}`;
  }
  if (roll < 0.5) {
    const rel = pick(files);
    writeFileSync(path.join(dir, rel), `edited at step ${n}\n`, { flag: "a" });
    return `edit ${rel}`;
  }
  if (roll < 0.6) {
    const from = pick(files);
    const to = `${pick(DIRS)}/${pick(NAMES)}`;
    if (from === to) return "rename (same)";
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    renameSync(path.join(dir, from), path.join(dir, to));
    return `mv ${from} ${to}`;
  }
  if (roll < 0.67) {
    const rel = pick(DIRS);
    rmSync(path.join(dir, rel), { recursive: true, force: true });
    return `rm -rf ${rel}`;
  }
  if (roll < 0.75) {
    // The same name, often the same inode: the case of defect 6.
    const rel = pick(DIRS);
    // Done in this process (the same calls as rm -rf, mkdir -p and echo >, back to back): a shell
    // forked from the test worker cost more than the step.
    rmSync(path.join(dir, rel), { recursive: true, force: true });
    write(ops, `${rel}/${pick(NAMES)}`, `reborn-${n}\n`);
    return `rm -rf ${rel} && mkdir ${rel}`;
  }
  if (roll < 0.85) {
    const where = random() < 0.7 ? "" : `${pick(DIRS)}/`;
    const lines = RULES.filter(() => random() < 0.3);
    write(ops, `${where}.gitignore`, lines.join("\n") + "\n");
    return `${where}.gitignore = ${JSON.stringify(lines)}`;
  }
  if (roll < 0.93) {
    const rel = pick(files);
    rmSync(path.join(dir, rel), { force: true });
    return `rm ${rel}`;
  }
  if (!burstDone.value) {
    burstDone.value = true;
    mkdirSync(path.join(dir, BURST_DIR), { recursive: true });
    // Few distinct contents: the watcher sees every file, the server stores a handful of blobs.
    for (let i = 0; i < BURST_FILES; i++) writeFileSync(path.join(dir, BURST_DIR, `g${i}.txt`), `gen ${i % 16}\n`);
    return `burst of ${BURST_FILES} files`;
  }
  return "nothing";
}

async function runSeed(seed: number): Promise<void> {
  const random = rng(seed);
  const base = existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  root = realpathSync(mkdtempSync(path.join(base, `uspark-fsfuzz-${seed}-`)));
  const dir = root;
  execFileSync("git", ["init", "-q"], { cwd: dir });
  // The server's own files are never looked at: on tmpfs, like the root.
  server = await startMemoryRef();
  const ops: Ops = { dir, random, log: [], pick: (list) => list[Math.floor(random() * list.length)]! };
  // The paths that existed while not ignored: one the rules turned ignored later may stay remote
  // (ignoring is not deleting). A path never visible must never be there. (The sync asks the
  // rules again when it reads a file: test/e2e/fswatch.test.ts shows content written after a
  // path turned ignored is not pushed.)
  scratch = realpathSync(mkdtempSync(path.join(base, `uspark-fsfuzz-rules-${seed}-`)));
  const seen = visibilityLog(scratch);
  const observe = () => {
    const files = treeFiles(dir, BURST_DIR);
    seen.look(
      files,
      files.filter((rel) => rel.endsWith(".gitignore")).map((rel) => [rel, readFileSync(path.join(dir, rel), "utf8")]),
    );
  };
  /** Remote paths the tree does not hold that were never visible in it. */
  const neverVisible = (remote: Iterable<string>, held: (rel: string) => boolean) => {
    const others = [...remote].filter((rel) => !held(rel));
    const visible = seen.visible(others);
    return others.filter((rel) => !visible.has(rel));
  };

  // --rescan 0: no scan during the steps; the file watcher is all that syncs them until the end.
  const run = await startCli(
    ["watch", "--project-id", "p1", "--api-url", server.url, "--root", dir, "--verbose", "--debounce", "30", "--rescan", "0"],
    {
      timeoutMs: TIMEOUT_MS,
    },
  );
  let stderr = "";
  run.child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // The scan when the watcher is ready comes after the start scan: both are done before the first step.
  await waitForOutput(run.child.stderr, (text) => /ready scan/.test(text), 30_000);
  const burstDone = { value: false };
  for (let n = 0; n < STEPS; n++) {
    ops.log.push(step(ops, n, burstDone));
    observe();
    // Now and then let the watcher catch up, else everything lands in one window.
    if (random() < 0.3) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 40)));
  }

  const files = treeFiles(dir);
  const ignored = gitIgnored(dir, files);
  const expected = new Map(files.filter((rel) => !ignored.has(rel)).map((rel) => [rel, readFileSync(path.join(dir, rel)).toString()]));
  const log = () => `seed ${seed}; operations:\n${ops.log.join("\n")}\nstderr (tail):\n${stderr.slice(-3000)}`;

  // Before the input ends (and with it the end scan), the remote must come to equal the tree.
  const expectedHashes = new Map([...expected].map(([rel, content]) => [rel, createHash("sha256").update(content).digest("hex")]));
  const gap = async () => {
    const { version, files: remote } = await remoteHashes(server!.url);
    const missing = [...expectedHashes].filter(([rel, sha256]) => remote.get(rel) !== sha256).map(([rel]) => rel);
    const extra = neverVisible(remote.keys(), (rel) => expectedHashes.has(rel));
    return { version, left: { missing: missing.slice(0, 20), extra: extra.slice(0, 20) } };
  };
  const caughtUpBy = Date.now() + CATCH_UP_MS;
  let { version, left } = await gap();
  while ((left.missing.length > 0 || left.extra.length > 0) && Date.now() < caughtUpBy) {
    await nextCommit(server.url, version, Math.max(1, Math.min(1000, caughtUpBy - Date.now())));
    ({ version, left } = await gap());
  }
  expect(left, `the file watcher did not bring these across within ${CATCH_UP_MS} ms; ${log()}`).toEqual({ missing: [], extra: [] });

  run.child.stdin.end();
  const done = await run.result;
  const remote = await remoteFiles(server.url);
  const context = log();
  const missing = [...expected].filter(([rel, content]) => remote.get(rel)?.toString() !== content).map(([rel]) => rel);
  const extra = neverVisible(remote.keys(), (rel) => expected.has(rel));
  expect({ missing: missing.slice(0, 20), extra: extra.slice(0, 20) }, context).toEqual({ missing: [], extra: [] });
  expect(done.code, context).toBe(0);
}

describe("the file watcher under random shell operations", () => {
  for (const seed of SEEDS) {
    it(`should leave the remote equal to the tree minus ignored files (seed ${seed})`, { timeout: TIMEOUT_MS }, async () => {
      await runSeed(seed);
    });
  }
});
