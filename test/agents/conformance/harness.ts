import * as vitest from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, startCli, waitForOutput } from "../../kit/cli.js";
import { workspace } from "../../reliability/harness.js";
import { remoteFiles, startRef, type RefServer } from "../../kit/sync.js";
import { conversationProblems } from "./conversation.js";
import { startModelServer, type ModelServer, type Scripts, type ToolStep, type Turn } from "./model-server.js";

const AGENTS_DIR = fileURLToPath(new URL("..", import.meta.url));
export const BIN = path.join(AGENTS_DIR, "node_modules", ".bin");

/** How to run one agent headless against the fake model, with its tools really executed. */
export interface AgentCase {
  /** The `--agent` name of its stream format. */
  agent: string;
  /** What `uspark watch --agent` is given (default `agent`): "auto" proves detection on the real stream. */
  watchAs?: string;
  /** Which of the agent's runs this is, where it has more than one (its tools differ by model). */
  variant?: string;
  /** The command and arguments, given the prompt. */
  command(prompt: string): [string, string[]];
  /** Environment and config files, in a temp HOME, that point it at `modelUrl` and nowhere else. */
  setup(home: string, modelUrl: string): NodeJS.ProcessEnv;
  /** The model's scripts, given the project's absolute path. */
  scripts(project: string): Scripts;
}

interface Run {
  /** The agent's own stdout, as it wrote it. */
  agentStdout: Buffer;
  agentStderr: string;
  agentCode: number | null;
  agentSignal: NodeJS.Signals | null;
  /** The agent was still running after AGENT_TIMEOUT_MS and was killed. */
  agentTimedOut: boolean;
  /** What came out of `uspark watch` behind it (its stderr: the JSON log, verbose). */
  watchStdout: Buffer;
  watchStderr: string;
  watchCode: number | null;
  /** The remote project after the run: path → content. */
  remote: Map<string, Buffer>;
  /** The project on disk after the run: path → content. */
  disk: Map<string, Buffer>;
}

/** The project each run starts from: pushed to the remote first, so deletes show. */
const INITIAL: Record<string, string> = {
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

const PROMPT = "SCRIPT:main: follow the script.";
const AGENT_TIMEOUT_MS = 90_000;

/**
 * Runs the agent in a temp HOME and project, its stdout teed into `uspark watch --verbose
 * --log-format json`, then reads both ends. The agent starts once the file watcher is ready,
 * so that every edit it makes can be seen as an event.
 */
async function runAgent(c: AgentCase): Promise<Run> {
  const { root: project, home, cleanup } = await workspace(`uspark-agent-${c.agent}-`);
  let model: ModelServer | undefined;
  let ref: RefServer | undefined;
  try {
    for (const [file, text] of Object.entries(INITIAL)) {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      writeFileSync(path.join(project, file), text);
    }
    model = await startModelServer(c.scripts(project));
    ref = await startRef();
    const cliArgs = ["--project-id", "p1", "--api-url", ref.url, "--root", project];
    const pushed = await runCli(["push", ...cliArgs], { cwd: project });
    if (pushed.code !== 0) throw new Error(`initial push failed: ${pushed.stderr}`);
    const env = c.setup(home, model.url);
    const [cmd, args] = c.command(PROMPT);
    const watchArgs = ["watch", "--agent", c.watchAs ?? c.agent, ...cliArgs, "--debounce", "50", "--verbose", "--log-format", "json"];
    const watch = await startCli(watchArgs, { cwd: project, timeoutMs: 120_000 });
    await waitForOutput(watch.child.stderr, (text) => /"event":"fswatch".*ready in/.test(text), 20_000).catch((error: unknown) => {
      watch.child.kill();
      throw error;
    });
    const agent = spawn(cmd, args, {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: home, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const agentOut: Buffer[] = [];
    let agentStderr = "";
    agent.stdout.on("data", (chunk: Buffer) => {
      agentOut.push(Buffer.from(chunk));
      watch.child.stdin.write(chunk);
    });
    agent.stderr.on("data", (chunk: Buffer) => (agentStderr += chunk.toString()));
    let agentTimedOut = false;
    const killer = setTimeout(() => {
      agentTimedOut = true;
      agent.kill("SIGKILL");
    }, AGENT_TIMEOUT_MS);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      agent.on("error", (error) => {
        watch.child.kill();
        reject(new Error(`${c.agent} could not be run: ${error.message}`));
      });
      agent.on("close", (code, signal) => resolve({ code, signal }));
    }).finally(() => {
      clearTimeout(killer);
      watch.child.stdin.end();
    });
    const [agentExit, result] = await Promise.all([exited, watch.result]);
    // For a failing case: USPARK_AGENT_DUMP=dir keeps each agent's stdout there.
    const dump = process.env.USPARK_AGENT_DUMP;
    if (dump) writeFileSync(path.join(dump, `${c.agent}${c.variant ?? ""}.jsonl`), Buffer.concat(agentOut));
    return {
      agentStdout: Buffer.concat(agentOut),
      agentStderr,
      agentCode: agentExit.code,
      agentSignal: agentExit.signal,
      agentTimedOut,
      watchStdout: result.stdout,
      watchStderr: result.stderr,
      watchCode: result.code,
      remote: await remoteFiles(ref.url),
      disk: tree(project),
    };
  } finally {
    await ref?.stop();
    await model?.close();
    await cleanup();
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
function digest(files: Map<string, Buffer>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...files.keys()].sort()) out[key] = createHash("sha256").update(files.get(key)!).digest("hex").slice(0, 12);
  return out;
}

/** Paths whose content on the remote differs from the initial project (written, created or deleted). */
function changedPaths(remote: Map<string, Buffer>): string[] {
  const paths = new Set([...Object.keys(INITIAL), ...remote.keys()]);
  return [...paths].filter((p) => remote.get(p)?.toString() !== INITIAL[p]).sort();
}

/**
 * The paths named in the log's "change" records: by the agent's tool events and the file watcher,
 * or with `streamOnly` by the tool events alone (every cause but the file watcher's, "fs").
 */
function detectedChanges(stderr: string, streamOnly = false): Set<string> {
  const named = new Set<string>();
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as { event?: string; path?: string; cause?: string };
    if (record.event !== "change" || typeof record.path !== "string") continue;
    if (!streamOnly || record.cause !== "fs") named.add(record.path);
  }
  return named;
}

/** What a failing assertion shows: how the agent ended, its stderr and stdout, and watch's log. */
function failureContext(run: Run): string {
  const killed = run.agentTimedOut ? `, killed: still running after ${AGENT_TIMEOUT_MS / 1000} s` : "";
  return [
    `agent exit: code ${run.agentCode}, signal ${run.agentSignal}${killed}`,
    `agent stderr:\n${run.agentStderr.slice(-2000)}`,
    `watch stderr:\n${run.watchStderr}`,
    `agent stdout:\n${run.agentStdout.toString().slice(-6000)}`,
  ].join("\n");
}

/** What one agent must do; each list in any order. */
export interface Expectation {
  /** Paths the stream alone changes on the remote: what its tool events name. */
  streamSyncs: string[];
  /** Paths the agent changes on disk in the run: with the watcher on, every one is seen and synced. */
  diskChanges: string[];
}

/**
 * The promises, per agent: the stream alone syncs exactly these paths; with the file watcher,
 * every change on disk is seen as an event (not left to the end scan) and remote = disk; stdout
 * untouched; the agent and watch both exit 0. One run proves both (each "change" record names
 * its cause, the tool or "fs"): a run with --no-fs-watch as well would prove nothing more, and
 * the suite must stay under 3 minutes on 2 cores.
 */
export function conformance(c: AgentCase, expected: Expectation): void {
  const { describe, expect, it } = vitest;
  const diskChanges = [...expected.diskChanges].sort();
  const streamSyncs = [...expected.streamSyncs].sort();
  let running: Promise<Run> | undefined;
  /** The run both promises are checked on, started by whichever asks first. */
  const checkedRun = async (): Promise<{ run: Run; context: string }> => {
    const run = await (running ??= runAgent(c));
    const context = failureContext(run);
    expect(run.agentCode, context).toBe(0);
    expect(run.watchCode, context).toBe(0);
    expect(changedPaths(run.disk), context).toStrictEqual(diskChanges);
    expect(run.watchStdout.equals(run.agentStdout), context).toBe(true);
    // The real binary's stream is the format it is read as: no "another agent's" or "one object" warning.
    expect(run.watchStderr, context).not.toContain('"event":"agent-format"');
    expect(run.watchStderr, context).not.toContain('"event":"one-object"');
    return { run, context };
  };
  describe(`${c.agent}${c.variant ? ` ${c.variant}` : ""} (the real binary)`, () => {
    it("names exactly the expected paths in its tool events, and passes its stdout through byte for byte", async () => {
      const { run, context } = await checkedRun();
      const named = detectedChanges(run.watchStderr, true);
      expect(
        changedPaths(run.remote).filter((file) => named.has(file)),
        context,
      ).toStrictEqual(streamSyncs);
    });

    it("sees every change on disk as an event with the file watcher on, and leaves the remote equal to the disk", async () => {
      const { run, context } = await checkedRun();
      // The end scan would sync what the events missed: that alone must not be what makes remote = disk.
      const detected = detectedChanges(run.watchStderr);
      expect(
        diskChanges.filter((file) => !detected.has(file)),
        `changes no event reported\n${context}`,
      ).toStrictEqual([]);
      expect(digest(run.remote), context).toStrictEqual(digest(run.disk));
    });

    it("reads as a conversation: its format, a call naming each synced path, none left running, a good result", async () => {
      const { run, context } = await checkedRun();
      expect(conversationProblems(run.agentStdout, c.agent, streamSyncs, PROMPT), context).toStrictEqual([]);
    });
  });
}

/** The tools of an agent that edits like Claude Code (Gemini CLI, Qwen Code), by the names it gives them. */
export interface EditTools {
  /** Writes a file: `file_path`, `content`. */
  write: string;
  /** Reads a file before an edit (`file_path`), where the agent wants that. */
  read?: string;
  /** Replaces `old_string` with `new_string` in `file_path`, with `fields` added to each call. */
  edit: [name: string, fields?: Record<string, unknown>];
  /** Runs `command`, with `fields` added. */
  shell: [name: string, fields?: Record<string, unknown>];
  /** Starts a sub-agent (`description`, `prompt`, `subagent_type`) that writes `sub/agent.txt`. */
  agent?: [name: string, subagentType: string, fields?: Record<string, unknown>];
  /** The tools' own names for the fields, where they are not Claude's (`file_path`, `content`, `old_string`, `new_string`, `subagent_type`). */
  keys?: Partial<EditKeys>;
  /** Also edit `p2.txt` and write `sub/par.txt` in one turn, as parallel calls (PARALLEL_EDITED). */
  parallel?: boolean;
}

interface EditKeys {
  path: string;
  content: string;
  old: string;
  new: string;
  subagentType: string;
}

const CLAUDE_KEYS: EditKeys = {
  path: "file_path",
  content: "content",
  old: "old_string",
  new: "new_string",
  subagentType: "subagent_type",
};

/** What the parallel turn of `edits()` changes on disk. */
export const PARALLEL_EDITED = ["p2.txt", "sub/par.txt"];

/** The shell command of the edit script: a write, a rename and a delete that no tool event names. */
const SHELL_EDITS = "echo shell > shell.txt && mv old-name.txt new-name.txt && rm doomed.txt";

/** What `edits()` changes on disk, besides its `extra` steps and the sub-agent's `sub/agent.txt`. */
export const EDITED = ["doomed.txt", "edit.txt", "multi.txt", "new-name.txt", "new.txt", "old-name.txt", "shell.txt"];

/**
 * The scripts of the agents that edit with write and edit tools: a write, an edit, two edits of
 * one file, an edit that does not apply, then `extra`, a shell (SHELL_EDITS) and, if the agent
 * has one, a sub-agent that writes.
 */
export function edits(p: string, tools: EditTools, extra: Turn[] = []): Scripts {
  const keys = { ...CLAUDE_KEYS, ...tools.keys };
  const [edit, editFields] = tools.edit;
  const [shell, shellFields] = tools.shell;
  const read = (file: string): ToolStep[] => (tools.read ? [{ tool: tools.read, input: { [keys.path]: `${p}/${file}` } }] : []);
  const write = (file: string, content: string): ToolStep => ({
    tool: tools.write,
    input: { [keys.path]: `${p}/${file}`, [keys.content]: content },
  });
  const replace = (file: string, old_string: string, new_string: string): ToolStep => ({
    tool: edit,
    input: { [keys.path]: `${p}/${file}`, [keys.old]: old_string, [keys.new]: new_string, ...editFields },
  });
  const main: Turn[] = [
    write("new.txt", "new\n"),
    ...read("edit.txt"),
    replace("edit.txt", "alpha", "ALPHA"),
    ...read("multi.txt"),
    replace("multi.txt", "one", "ONE"),
    replace("multi.txt", "three", "THREE"),
    replace("p1.txt", "not there", "x"),
    ...(tools.parallel ? [[replace("p2.txt", "patch two", "PATCH TWO"), write("sub/par.txt", "parallel\n")]] : []),
    ...extra,
    { tool: shell, input: { command: SHELL_EDITS, ...shellFields } },
  ];
  if (!tools.agent) return [["SCRIPT:main", main]];
  const [agent, subagent_type, agentFields] = tools.agent;
  main.push({
    tool: agent,
    input: { description: "write a file", prompt: "SCRIPT:sub: write the file", [keys.subagentType]: subagent_type, ...agentFields },
  });
  return [
    ["SCRIPT:main", main],
    ["SCRIPT:sub", [write("sub/agent.txt", "from the sub-agent\n")]],
  ];
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

/** The turns of `patches()`, with the multi.txt patch and the two-file one called in parallel. */
export function parallelPatches(p: string, call: (lines: string[]) => ToolStep): Turn[] {
  const steps = patches(p).map(call);
  return [steps[0]!, steps[1]!, [steps[2]!, steps[3]!], ...steps.slice(4)];
}
