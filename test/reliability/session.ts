// Generated agent sessions for the reliability suite: a Claude Code stream-json session of N
// file edits, played into the built CLI like scripts/play-session.mjs plays a recording (each
// edit is applied to disk before its tool_result line is written), and the end-of-run checks.

import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { SpawnedChild } from "../kit/spawner.js";

/** Deterministic PRNG (mulberry32): a failing seed replays the same session. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

export interface Step {
  /** One stream line, without its newline. */
  line: string;
  /** Applied to disk before the line is written (the tool ran, then reported). */
  apply?: () => void;
  /** Pause after the line, ms (shapes the stream into bursts; never a wait for an outcome). */
  pauseMs?: number;
  /** This line completes one edit (a successful write/delete, a Bash rm). */
  edit?: boolean;
  /** The project-relative path `apply` changes. */
  touches?: string;
}

export interface SessionPlan {
  steps: Step[];
  /** Project-relative paths any edit touched. */
  touched: Set<string>;
  /** File edits the session makes. */
  edits: number;
}

export interface SessionShape {
  edits: number;
  /** Distinct files the edits go to. */
  files?: number;
  /** Roughly how long playing the session takes, ms. */
  durationMs?: number;
}

/**
 * A Claude stream-json session of `edits` edits: Write, Edit and MultiEdit tool calls confirmed
 * by their tool_result (some from a sub-agent), Bash `rm`s only the file watcher sees, failed
 * calls (is_error, nothing changes), noise (text, Read, stream_event), and at the very end two
 * calls whose result never comes (the stream is cut), which the watcher checks by hash.
 */
export function generateSession(root: string, seed: number, shape: SessionShape): SessionPlan {
  const random = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const fileCount = shape.files ?? 30;
  const dirs = ["src", "src/lib", "test", "docs", "src/deep/nested/dir"];
  const files = Array.from({ length: fileCount }, (_, i) => `${dirs[i % dirs.length]}/file-${i}.${pick(["ts", "md", "json", "txt"])}`);
  const exists = new Set<string>();
  const touched = new Set<string>();
  const steps: Step[] = [];
  const session = randomUUID();
  let id = 0;
  let edits = 0;
  const abs = (rel: string) => path.join(root, rel);
  const content = (rel: string, n: number) =>
    `// ${rel} version ${n} (seed ${seed})\n` +
    Array.from({ length: 1 + Math.floor(random() * 40) }, (_, i) => `line ${i} ${random().toString(36)}`).join("\n") +
    "\n";

  const event = (type: "assistant" | "user", content: unknown[], parent: string | null = null) =>
    JSON.stringify({ type, message: { role: type, content }, parent_tool_use_id: parent, session_id: session, uuid: randomUUID() });
  const toolUse = (name: string, input: Record<string, unknown>, parent: string | null) => {
    const callId = `toolu_${seed}_${++id}`;
    return { callId, line: event("assistant", [{ type: "tool_use", id: callId, name, input }], parent) };
  };
  const toolResult = (callId: string, error: boolean, parent: string | null) =>
    event(
      "user",
      [
        {
          type: "tool_result",
          tool_use_id: callId,
          content: error ? "<tool_use_error>String to replace not found</tool_use_error>" : "ok",
          ...(error ? { is_error: true } : {}),
        },
      ],
      parent,
    );

  steps.push({
    line: JSON.stringify({
      type: "system",
      subtype: "init",
      cwd: root,
      session_id: session,
      tools: ["Bash", "Edit", "MultiEdit", "Write", "Read"],
      model: "claude-test",
    }),
  });

  while (edits < shape.edits) {
    const parent = random() < 0.1 ? "toolu_task_parent" : null;
    const roll = random();
    if (roll < 0.08) {
      // Noise the watcher must pass through and ignore.
      const noise = pick([
        () => event("assistant", [{ type: "text", text: `thinking about ${pick(files)} ${"…".repeat(Math.floor(random() * 50))}` }]),
        () =>
          JSON.stringify({
            type: "stream_event",
            event: { type: "content_block_delta", delta: { type: "input_json_delta", partial_json: '{"file_path":' } },
            session_id: session,
          }),
        () => toolUse("Read", { file_path: abs(pick(files)) }, parent).line,
        () => toolResult(`toolu_unknown_${id}`, false, parent),
      ]);
      steps.push({ line: noise() });
      continue;
    }
    const rel = pick(files);
    const n = edits + 1;
    if (roll < 0.13 && exists.has(rel)) {
      // Bash rm: no tool event names the file; only the file system watcher sees it.
      const call = toolUse("Bash", { command: `rm ${rel}`, description: "remove a file" }, parent);
      steps.push({ line: call.line });
      steps.push({
        line: toolResult(call.callId, false, parent),
        apply: () => rmSync(abs(rel), { force: true }),
        edit: true,
        touches: rel,
      });
      exists.delete(rel);
      touched.add(rel);
      edits++;
      continue;
    }
    if (roll < 0.17) {
      // A failed call: nothing changes on disk, and it must not be pushed as if it had.
      const call = toolUse("Edit", { file_path: abs(rel), old_string: "no such text", new_string: "x" }, parent);
      steps.push({ line: call.line });
      steps.push({ line: toolResult(call.callId, true, parent) });
      continue;
    }
    const tool = exists.has(rel) ? pick(["Write", "Edit", "Edit", "MultiEdit"] as const) : "Write";
    const next = content(rel, n);
    const input =
      tool === "Write"
        ? { file_path: abs(rel), content: next }
        : tool === "Edit"
          ? { file_path: abs(rel), old_string: "version", new_string: `version ${n}` }
          : { file_path: abs(rel), edits: [{ old_string: "line 0", new_string: `line 0 edited ${n}` }] };
    const call = toolUse(tool, input, parent);
    steps.push({ line: call.line });
    steps.push({
      line: toolResult(call.callId, false, parent),
      edit: true,
      touches: rel,
      apply: () => {
        mkdirSync(path.dirname(abs(rel)), { recursive: true });
        if (tool === "Write") writeFileSync(abs(rel), next);
        else writeFileSync(abs(rel), readFileSync(abs(rel), "utf8") + `edited by ${tool} #${n}\n`);
      },
    });
    exists.add(rel);
    touched.add(rel);
    edits++;
  }

  // The stream is cut: two calls ran (their files changed) but their results never came.
  for (const rel of [files[0]!, `unconfirmed/cut-${seed}.txt`]) {
    const call = toolUse("Write", { file_path: abs(rel), content: "cut" }, null);
    steps.push({
      line: call.line,
      touches: rel,
      apply: () => {
        mkdirSync(path.dirname(abs(rel)), { recursive: true });
        writeFileSync(abs(rel), `written by a call whose result never came (${rel})\n`);
      },
    });
    touched.add(rel);
  }

  // Bursts of edits separated by pauses longer than a small --debounce: many batches.
  const duration = shape.durationMs ?? 3000;
  const editSteps = steps.filter((s) => s.edit);
  const bursts = Math.max(1, Math.round(editSteps.length / 3.5));
  let left = 0;
  for (const step of editSteps) {
    if (left-- > 0) continue;
    left = Math.floor(random() * 6);
    step.pauseMs = Math.round((duration / bursts) * (0.5 + random()));
  }
  return { steps, touched, edits };
}

/** Lets a test stop a session half-way (the rest is never played, stdin stays open). */
export class PlayControl {
  stopped = false;
  private onHalt: () => void = () => {};
  /** Resolves once the player has stopped writing. */
  readonly halted = new Promise<void>((resolve) => (this.onHalt = resolve));

  /** Called before each step; may wait (e.g. for an outage to begin). */
  constructor(readonly beforeStep?: (index: number, elapsedMs: number) => Promise<void> | void) {}

  stop(): Promise<void> {
    this.stopped = true;
    return this.halted;
  }

  /** @internal */
  halt(): void {
    this.onHalt();
  }
}

export interface Played {
  /** When stdin was closed (or the player stopped), ms since epoch. */
  endedAt: number;
  /** Exactly what was written to stdin. */
  input: Buffer;
  /** Paths changed on disk by the steps that were played. */
  touched: Set<string>;
}

/** Plays the session into the child's stdin (with backpressure), then closes stdin. */
export async function play(child: SpawnedChild, plan: SessionPlan, control: PlayControl = new PlayControl()): Promise<Played> {
  const started = Date.now();
  const written: Buffer[] = [];
  const touched = new Set<string>();
  for (const [index, step] of plan.steps.entries()) {
    await control.beforeStep?.(index, Date.now() - started);
    if (control.stopped) break;
    step.apply?.();
    if (step.touches) touched.add(step.touches);
    const bytes = Buffer.from(step.line + "\n");
    written.push(bytes);
    if (!child.stdin.write(bytes)) await new Promise((resolve) => child.stdin.once("drain", resolve));
    if (step.pauseMs) await sleep(step.pauseMs);
  }
  if (!control.stopped) child.stdin.end();
  control.halt();
  return { endedAt: Date.now(), input: Buffer.concat(written), touched };
}

export interface RemoteListing {
  version: number;
  files: { path: string; sha256: string; size: number }[];
}

/** GET /files straight from the server (not through a proxy). */
export async function listRemote(apiUrl: string, projectId: string, token?: string): Promise<RemoteListing> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await fetch(`${apiUrl}/api/projects/${projectId}/files`, { headers });
  if (res.status !== 200) throw new Error(`GET /files answered ${res.status}`);
  return (await res.json()) as RemoteListing;
}

export interface JournalEntryLike {
  path: string;
  local: string;
  reason: string;
  apiUrl: string;
  projectId: string;
}

export async function readJournalFile(root: string): Promise<{ text: string; entries: JournalEntryLike[] }> {
  try {
    const text = await readFile(path.join(root, ".uspark", "pending.json"), "utf8");
    return { text, entries: (JSON.parse(text) as { entries: JournalEntryLike[] }).entries };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { text: "", entries: [] };
    throw error;
  }
}

export interface Reconciliation {
  touched: number;
  /** Remote content equals local content (or both have no file). */
  synced: number;
  /** Not synced, but in the journal. */
  journaled: number;
  /** Neither: the edit is lost. Must be 0. */
  lost: string[];
}

/** Compares every touched file's local content with the remote, and consults the journal. */
export function reconcile(root: string, touched: Iterable<string>, remote: RemoteListing, journal: JournalEntryLike[]): Reconciliation {
  const remoteSha = new Map(remote.files.map((f) => [f.path, f.sha256]));
  const journaled = new Set(journal.map((e) => e.path));
  const result: Reconciliation = { touched: 0, synced: 0, journaled: 0, lost: [] };
  for (const rel of touched) {
    result.touched++;
    const local = existsSync(path.join(root, rel)) ? sha256(readFileSync(path.join(root, rel))) : undefined;
    if (remoteSha.get(rel) === local) result.synced++;
    else if (journaled.has(rel)) result.journaled++;
    else result.lost.push(`${rel} (local ${local?.slice(0, 8) ?? "absent"}, remote ${remoteSha.get(rel)?.slice(0, 8) ?? "absent"})`);
  }
  return result;
}

interface CommitRecord {
  version: number;
  key: string;
  changes: ({ op: "put"; path: string; sha256: string } | { op: "delete"; path: string })[];
}

export interface CommitLogStats {
  commits: number;
  keys: Set<string>;
  /** Records whose Idempotency-Key was applied before. */
  repeatedKeys: number;
  /**
   * Records that change nothing: every put already there with that content, every delete of a
   * path that is not there. That is what a retry applied a second time looks like.
   */
  noOps: number;
  byKey: Map<string, number>;
}

/** Reads a project's commit log (DATA/projects/<id>/commits.ndjson) and counts duplicates. */
export async function commitLog(dataDir: string, projectId: string): Promise<CommitLogStats> {
  let text = "";
  try {
    text = await readFile(path.join(dataDir, "projects", projectId, "commits.ndjson"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const stats: CommitLogStats = { commits: 0, keys: new Set(), repeatedKeys: 0, noOps: 0, byKey: new Map() };
  const state = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (!line) continue;
    const record = JSON.parse(line) as CommitRecord;
    stats.commits++;
    if (stats.keys.has(record.key)) stats.repeatedKeys++;
    stats.keys.add(record.key);
    stats.byKey.set(record.key, record.version);
    let changesSomething = false;
    for (const change of record.changes) {
      if (change.op === "put") {
        if (state.get(change.path) !== change.sha256) changesSomething = true;
        state.set(change.path, change.sha256);
      } else {
        if (state.has(change.path)) changesSomething = true;
        state.delete(change.path);
      }
    }
    if (!changesSomething) stats.noOps++;
  }
  return stats;
}

/** NDJSON records of a `--log-format json` stderr. */
export function jsonRecords(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
