import * as vitest from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, type RunningServer } from "../../../src/server/index.js";
import { runCli, startCli } from "../../helpers/cli.js";
import { remoteFiles } from "../../sync/helpers.js";
import { startModelServer, type ModelServer, type Scripts } from "./model-server.js";

export const AGENTS_DIR = fileURLToPath(new URL("..", import.meta.url));
export const BIN = path.join(AGENTS_DIR, "node_modules", ".bin");

/** How to run one agent headless against the fake model, with its tools really executed. */
export interface AgentCase {
  /** The `--agent` name of its stream format. */
  agent: string;
  /** What `uspark watch --agent` is given (default `agent`): "auto" proves detection on the real stream. */
  watchAs?: string;
  /** The command and arguments, given the prompt. */
  command(prompt: string): [string, string[]];
  /** Environment and config files, in a temp HOME, that point it at `modelUrl` and nowhere else. */
  setup(home: string, project: string, modelUrl: string): NodeJS.ProcessEnv;
  /** The model's scripts, given the project's absolute path. */
  scripts(project: string): Scripts;
}

export interface Run {
  /** The agent's own stdout, as it wrote it. */
  agentStdout: Buffer;
  /** What came out of `uspark watch` behind it. */
  watchStdout: Buffer;
  watchStderr: string;
  watchCode: number | null;
  agentStderr: string;
  /** The remote project after the run: path → content. */
  remote: Map<string, Buffer>;
  /** The project on disk after the run: path → content. */
  disk: Map<string, Buffer>;
  model: ModelServer;
}

/** The project each run starts from: pushed to the remote first, so deletes show. */
export const INITIAL: Record<string, string> = {
  "edit.txt": "alpha\nbeta\n",
  "multi.txt": "one\ntwo\nthree\n",
  "p1.txt": "patch one\n",
  "p2.txt": "patch two\n",
  "half1.txt": "half one\n",
  "half2.txt": "half two\n",
  "old-name.txt": "rename me\n",
  "doomed.txt": "delete me\n",
  "sub/keep.txt": "in a subdirectory\n",
};

/** Runs the agent in a temp HOME and project, its stdout teed into `uspark watch`, then reads both ends. */
export async function runAgent(c: AgentCase, prompt: string, watchFlags: string[]): Promise<Run> {
  const base = mkdtempSync(path.join(tmpdir(), `uspark-agent-${c.agent}-`));
  const home = path.join(base, "home");
  const project = path.join(base, "project");
  mkdirSync(home);
  for (const [file, text] of Object.entries(INITIAL)) {
    mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    writeFileSync(path.join(project, file), text);
  }
  const model = await startModelServer(c.scripts(project));
  let ref: RunningServer | undefined;
  try {
    ref = await startServer({ dataDir: path.join(base, "data"), port: 0 });
    const cliArgs = ["--project-id", "p1", "--api-url", ref.url, "--root", project];
    const pushed = await runCli(["push", ...cliArgs], { cwd: project });
    if (pushed.code !== 0) throw new Error(`initial push failed: ${pushed.stderr}`);
    const env = c.setup(home, project, model.url);
    const [cmd, args] = c.command(prompt);
    const watch = startCli(["watch", "--agent", c.watchAs ?? c.agent, ...cliArgs, "--debounce", "50", ...watchFlags], { cwd: project, timeoutMs: 120_000 });
    const agent = spawn(cmd, args, { cwd: project, env: { PATH: process.env.PATH, HOME: home, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const agentOut: Buffer[] = [];
    let agentStderr = "";
    agent.stdout.on("data", (chunk: Buffer) => {
      agentOut.push(Buffer.from(chunk));
      watch.child.stdin.write(chunk);
    });
    agent.stderr.on("data", (chunk: Buffer) => (agentStderr += chunk.toString()));
    const killer = setTimeout(() => agent.kill("SIGKILL"), 90_000);
    await new Promise<void>((resolve) => agent.on("close", () => resolve()));
    clearTimeout(killer);
    watch.child.stdin.end();
    const result = await watch.result;
    // For a failing case: USPARK_AGENT_DUMP=dir keeps each agent's stdout there.
    const dump = process.env.USPARK_AGENT_DUMP;
    if (dump) writeFileSync(path.join(dump, `${c.agent}${watchFlags.join("")}.jsonl`), Buffer.concat(agentOut));
    return {
      agentStdout: Buffer.concat(agentOut),
      watchStdout: result.stdout,
      watchStderr: result.stderr,
      watchCode: result.code,
      agentStderr,
      remote: await remoteFiles(ref.url),
      disk: tree(project),
      model,
    };
  } finally {
    await ref?.close();
    await model.close();
    rmSync(base, { recursive: true, force: true });
  }
}

/** Every file under `dir` (not `.uspark/`), by its `/`-separated relative path. */
function tree(dir: string, prefix = ""): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (rel === ".uspark") continue;
    if (entry.isDirectory()) for (const [k, v] of tree(dir, rel)) files.set(k, v);
    else if (entry.isFile()) files.set(rel, readFileSync(path.join(dir, rel)));
  }
  return files;
}

/** A map of contents as hashes, sorted by path: what the assertions compare. */
export function digest(files: Map<string, Buffer>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...files.keys()].sort()) out[key] = createHash("sha256").update(files.get(key)!).digest("hex").slice(0, 12);
  return out;
}

/** Paths whose content on the remote differs from the initial project (written, created or deleted). */
export function changedPaths(remote: Map<string, Buffer>): string[] {
  const paths = new Set([...Object.keys(INITIAL), ...remote.keys()]);
  return [...paths].filter((p) => remote.get(p)?.toString() !== INITIAL[p]).sort();
}

/** What one agent's stream alone must sync, and the prompt that starts its main script. */
export interface Expectation {
  /** Paths the stream alone changes on the remote (`--no-fs-watch`), sorted. */
  streamSyncs: string[];
  /** Paths the agent changes on disk in the run, sorted: with the watcher on, all of them sync. */
  diskChanges: string[];
}

/** The three promises, per agent: the stream alone syncs exactly these paths; with the watcher, remote = disk; stdout untouched. */
export function conformance(c: AgentCase, expected: Expectation): void {
  const { describe, expect, it } = vitest;
  // One run at a time: Gemini CLI and Qwen Code (Node) starve each other on 2 cores.
  describe(`${c.agent} (the real binary)`, () => {
    it("syncs exactly the stream's paths with --no-fs-watch, and passes its stdout through byte for byte", async () => {
      const run = await runAgent(c, PROMPT, ["--no-fs-watch", "--verbose", "--log-format", "json"]);
      const context = `agent stderr:\n${run.agentStderr.slice(-2000)}\nwatch stderr:\n${run.watchStderr}\nagent stdout:\n${run.agentStdout.toString().slice(-6000)}`;
      expect(changedPaths(run.disk), context).toStrictEqual(expected.diskChanges);
      // The start and end scans run even with --no-fs-watch (no edit lost); what the stream
      // alone gave is what its tool events named and the remote now holds.
      const named = streamChanges(run.watchStderr);
      expect(changedPaths(run.remote).filter((file) => named.has(file)), context).toStrictEqual(expected.streamSyncs);
      expect(run.watchStdout.equals(run.agentStdout), context).toBe(true);
      expect(run.watchCode, context).toBe(0);
    });

    it("leaves the remote equal to the disk with the file watcher on", async () => {
      const run = await runAgent(c, PROMPT, []);
      const context = `watch stderr:\n${run.watchStderr}`;
      expect(changedPaths(run.disk), context).toStrictEqual(expected.diskChanges);
      expect(digest(run.remote), context).toStrictEqual(digest(run.disk));
      expect(run.watchStdout.equals(run.agentStdout), context).toBe(true);
    });
  });
}

export const PROMPT = "SCRIPT:main: follow the script.";

/** The paths the agent's tool events named, from `uspark watch --verbose --log-format json`'s "change" records. */
function streamChanges(stderr: string): Set<string> {
  const named = new Set<string>();
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as { event?: string; path?: string };
    if (record.event === "change" && typeof record.path === "string") named.add(record.path);
  }
  return named;
}

/**
 * The patches of the agents that edit with apply_patch (Codex, OpenCode), without their
 * `*** Begin Patch` / `*** End Patch` lines: add, update, two hunks in one file, two files,
 * a hunk that does not apply, a write that fails halfway, a rename, a delete.
 */
export function patches(p: string): string[][] {
  return [
    [`*** Add File: ${p}/new.txt`, "+new"],
    [`*** Update File: ${p}/edit.txt`, "@@", "-alpha", "+ALPHA"],
    [`*** Update File: ${p}/multi.txt`, "@@", "-one", "+ONE", "@@", "-three", "+THREE"],
    [`*** Update File: ${p}/p1.txt`, "@@", "-patch one", "+PATCH ONE", `*** Update File: ${p}/p2.txt`, "@@", "-patch two", "+PATCH TWO"],
    [`*** Update File: ${p}/half2.txt`, "@@", "-no such line", "+x"],
    // A file where a directory must be: the first file is written, then the patch fails.
    [`*** Update File: ${p}/half1.txt`, "@@", "-half one", "+HALF ONE", `*** Add File: ${p}/sub/keep.txt/inner.txt`, "+x"],
    [`*** Update File: ${p}/old-name.txt`, `*** Move to: ${p}/new-name.txt`, "@@", "-rename me", "+renamed"],
    [`*** Delete File: ${p}/doomed.txt`],
  ];
}

export const patchText = (lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
