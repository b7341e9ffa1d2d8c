import type { CommitRecord, RemoteFile } from "../api/types.js";
import { ApiError } from "../transfer/client.js";
import { writeStdout } from "../terminal/output.js";
import { resolvePaths } from "./scope.js";
import { shellWord } from "../terminal/terminal-text.js";
import { openInspection, type InspectOptions } from "./status.js";
import type { Workspace } from "./workspace.js";
import { errorText } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * The remote's history (docs/commands.md#status-diff-and-history, docs/server.md#history):
 * `uspark log [path] [-n N] [--json]` (the commits, newest first, through the feed's path filter),
 * `uspark ls [--at N]` (the files at a version) and `uspark cat <path> [--at N]` (a file's bytes at
 * a version, on stdout). Exit 0 answered, 1 not found or failed, 2 bad usage (a version the server
 * does not have, a server older than 1.2).
 */

export interface HistoryOptions extends InspectOptions {
  /** Relative paths are relative to this; default process.cwd(). */
  cwd?: string;
}

/** Thrown for what the user asked wrong (exit 2), said as is. */
class HistoryUsage extends UsparkError {
  readonly code = "usage";
}

/** A workspace for one history command, its answer, closed after; failures said as `<command> failed`. Only a restore `writes` (its base). */
export async function withHistory(
  options: HistoryOptions,
  command: "log" | "ls" | "cat" | "restore",
  work: (ws: Workspace) => Promise<number>,
  writes = false,
): Promise<number> {
  const ws = await openInspection(options, command, writes);
  if (typeof ws === "number") return ws;
  try {
    return await work(ws);
  } catch (error) {
    if (error instanceof HistoryUsage) {
      options.report.error("usage", error.message);
      return 2;
    }
    options.report.error(`${command}-failed`, `${command} failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

/** The project path a command line path names (relative to the current directory), or undefined after a usage error was said. */
export function projectPath(options: HistoryOptions, arg: string): string | undefined {
  const scope = resolvePaths({ ...options, ignore: options.ignore ? [...options.ignore] : undefined, paths: [arg] });
  if (scope === "usage") return undefined;
  if (!scope) {
    options.report.error("usage", `${arg} is the project root, not a file`);
    return undefined;
  }
  return scope.given[0];
}

export async function runLog(options: HistoryOptions & { path?: string; limit: number; json: boolean }): Promise<number> {
  const path = options.path === undefined ? undefined : projectPath(options, options.path);
  if (options.path !== undefined && path === undefined) return 2;
  return withHistory(options, "log", async (ws) => {
    needsHistory(ws, "commit log");
    const commits = (await lastCommits(ws, options.limit, path)).reverse();
    const shown =
      path === undefined
        ? commits
        : commits.map((c) => ({ ...c, changes: c.changes.filter((ch) => ch.path === path || ch.path.startsWith(path + "/")) }));
    await writeStdout(
      options.json ? JSON.stringify({ format: 1, version: ws.view.version, commits: shown }) + "\n" : shown.map(commitText).join(""),
    );
    // stdout stays empty for a script; a person at a terminal would otherwise see nothing at all.
    if (shown.length === 0 && !options.json)
      options.report.info("log", path === undefined ? `no commits yet in ${options.projectId}` : `no commit has touched ${path}`);
    return 0;
  });
}

/** The last `limit` commits, oldest first, in pages: from `limit` below the head, or (a path's, sparse) from the start. */
async function lastCommits(ws: Workspace, limit: number, path: string | undefined): Promise<CommitRecord[]> {
  const head = ws.view.version;
  let kept: CommitRecord[] = [];
  for (let since = path === undefined ? Math.max(0, head - limit) : 0; since < head;) {
    const feed = await ws.remote.feed(since, { limit: 1000, path }, ws.signal);
    if (feed.commits.length === 0) break;
    kept = [...kept, ...feed.commits].slice(-limit);
    since = feed.commits.at(-1)!.version;
  }
  return kept;
}

function commitText(commit: CommitRecord): string {
  const who = [commit.source?.agent, commit.source?.sessionId ? `session ${commit.source.sessionId}` : undefined]
    .filter(Boolean)
    .join(", ");
  const lines = [`version ${commit.version}  ${commit.time}${who ? `  ${who}` : ""}`];
  for (const change of commit.changes) lines.push(`  ${change.op === "put" ? "put   " : "delete"} ${change.path}`);
  return lines.join("\n") + "\n";
}

export async function runLs(options: HistoryOptions & { at?: number }): Promise<number> {
  return withHistory(options, "ls", async (ws) => {
    const files = await filesAt(ws, options.at);
    await writeStdout(files.map((f) => `${f.path}\n`).join(""));
    return 0;
  });
}

export async function runCat(options: HistoryOptions & { path: string; at?: number }): Promise<number> {
  const path = projectPath(options, options.path);
  if (path === undefined) return 2;
  return withHistory(options, "cat", async (ws) => {
    const at = options.at ?? ws.view.version;
    const files = await filesAt(ws, at);
    const file = files.find((f) => f.path === path);
    if (!file) {
      const directory = files.some((f) => f.path.startsWith(path + "/"));
      const message = directory
        ? `${path} is a directory at version ${at}, not a file`
        : `${path} does not exist at version ${at}${await whereItWas(ws, path, at)}`;
      options.report.error("not-found", message, { path });
      return 1;
    }
    await writeStdout(await blobBytes(ws, file));
    return 0;
  });
}

/** When the path absent at version `at` was there: it was deleted, or is written later, or never (said after a colon; nothing from a pre-1.2 server or a failed read). */
async function whereItWas(ws: Workspace, path: string, at: number): Promise<string> {
  if (ws.view.api !== "1.2") return "";
  let touched: CommitRecord[];
  try {
    touched = (await lastCommits(ws, Infinity, path)).filter((commit) => commit.changes.some((change) => change.path === path));
  } catch {
    return "";
  }
  const deleted = touched.filter((commit) => commit.version <= at).at(-1);
  if (deleted)
    return `: deleted in version ${deleted.version} (\`uspark cat ${shellWord(path)} --at ${deleted.version - 1}\` shows it before)`;
  const written = touched.find((commit) => commit.version > at);
  return written ? `: first written in version ${written.version}` : ": no commit has written it";
}

/** The listing at version `at` (default: now); a version the server does not have, or cannot give, is a usage error. */
export async function filesAt(ws: Pick<Workspace, "view" | "remote" | "signal">, at: number | undefined): Promise<RemoteFile[]> {
  if (at === undefined || at === ws.view.version) return [...ws.view.files].map(([path, f]) => ({ path, ...f }));
  needsHistory(ws, "old versions");
  if (at > ws.view.version) throw new HistoryUsage(`--at ${at}: the project is at version ${ws.view.version}`);
  try {
    return (await ws.remote.list(ws.signal, at)).files;
  } catch (error) {
    if (error instanceof ApiError && error.status === 410) throw new HistoryUsage(`--at ${at}: the server no longer keeps version ${at}`);
    if (error instanceof ApiError && error.status === 404 && error.code === "version_not_found")
      throw new HistoryUsage(`--at ${at}: no such version (the project is at ${ws.view.version})`);
    throw error;
  }
}

/** A blob's bytes, through the transfer layer: retried, and checked against its sha256. */
export async function blobBytes(ws: Workspace, blob: { sha256: string; size: number }): Promise<Uint8Array> {
  let bytes: Uint8Array | undefined;
  const failed = await ws.remote.transfer.downloadBlobs([blob], async (_, got) => void (bytes = got), ws.signal);
  if (!bytes) throw new Error(`blob ${blob.sha256.slice(0, 12)}: ${failed.get(blob.sha256) ?? "not sent"}`);
  return bytes;
}

function needsHistory(ws: Pick<Workspace, "view">, what: string): void {
  if (ws.view.api !== "1.2") throw new HistoryUsage(`this server speaks an API older than 1.2: it keeps no ${what}`);
}
