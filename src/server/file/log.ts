// Per-project commit logs: DATA/projects/<dir>/commits.ndjson, one JSON line per acknowledged
// commit. A project's files map, version and idempotency keys are rebuilt from its log on open;
// the commits themselves stay on disk and are read back by byte offset (GET /commits, files as of
// a version), so memory holds per commit only its key, fingerprint and offset.

import { createReadStream } from "node:fs";
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { chainHash, ZERO_CHAIN } from "../../api/chain.js";
import type { Change, CommitSource } from "../../api/types.js";
import { ancestorsOf } from "../../api/validate.js";
import { requestFingerprint } from "../commit-check.js";
import { fsyncDir, isCode, writeAll } from "../fsutil.js";
import { errorCode, errorText } from "../../errors/text.js";

export const LOG_FILE = "commits.ndjson";

export interface LogRecord {
  version: number;
  key: string;
  at: string;
  changes: Change[];
  source?: CommitSource;
  /** v1.3: the chain hash at `version`; computed on load for records written before it. */
  chain?: string;
}

export interface Project {
  id: string;
  /** Its directory (see projectDirName). */
  dir: string;
  version: number;
  files: Map<string, { sha256: string; size: number }>;
  /** The blobs the project may see: named by its commits, or uploaded to it (visible-blobs.ts). */
  visible: Set<string>;
  /** How many files each directory holds (at any depth): a commit's file/directory clashes are found without a scan. */
  dirs: Map<string, number>;
  /** Idempotency-Key → the version it was answered with and the fingerprint of its request. */
  keys: Map<string, { version: number; fingerprint: string }>;
  /** Where each version's record starts in the log: offsets[version - 1]. */
  offsets: number[];
  /** The chain hash at each version: chains[version] (chains[0] is ZERO_CHAIN). */
  chains: string[];
  /** Bytes of the log that hold complete records. */
  logBytes: number;
  /** ISO time of the last commit, or of the creation. */
  updated: string;
  /** Why the project refuses requests (corrupt log, or a failed append that could not be undone). */
  broken?: string;
}

export function emptyProject(id: string, dir: string, created: string): Project {
  return {
    id,
    dir,
    version: 0,
    files: new Map(),
    visible: new Set(),
    dirs: new Map(),
    keys: new Map(),
    offsets: [],
    chains: [ZERO_CHAIN],
    logBytes: 0,
    updated: created,
  };
}

/** The chain hash of the record that follows the project's head. */
export function nextChain(project: Project, changes: readonly Change[]): string {
  return chainHash(project.chains[project.version]!, changes);
}

/** Applies the record found at byte `offset` of the log; one whose chain hash is not its own is damage. */
export function applyRecord(project: Project, record: LogRecord, offset: number): void {
  const chain = nextChain(project, record.changes);
  if (record.chain !== undefined && record.chain !== chain)
    throw new Error(`the chain hash of version ${record.version} is not the one of its changes`);
  project.chains.push(chain);
  for (const change of record.changes) {
    countDirs(project, change);
    applyChanges(project.files, [change]);
  }
  for (const change of record.changes) if (change.op === "put") project.visible.add(change.sha256);
  project.version = record.version;
  project.keys.set(record.key, { version: record.version, fingerprint: requestFingerprint(requestOf(record)) });
  project.offsets.push(offset);
  project.updated = record.at;
}

/** Before `change` is applied: the directories above a file it adds or removes count it. */
function countDirs(project: Project, change: Change): void {
  const step = change.op === "put" ? (project.files.has(change.path) ? 0 : 1) : project.files.has(change.path) ? -1 : 0;
  if (step === 0) return;
  for (const dir of ancestorsOf(change.path)) {
    const count = (project.dirs.get(dir) ?? 0) + step;
    if (count === 0) project.dirs.delete(dir);
    else project.dirs.set(dir, count);
  }
}

/** The changes, in order, applied to a files map: the last change of a path wins. */
export function applyChanges(files: Map<string, { sha256: string; size: number }>, changes: readonly Change[]): void {
  for (const change of changes) {
    if (change.op === "put") files.set(change.path, { sha256: change.sha256, size: change.size });
    else files.delete(change.path);
  }
}

/** The commit request a record was applied from (what its key is bound to). */
export function requestOf(record: LogRecord): { changes: Change[]; source?: CommitSource } {
  return record.source === undefined ? { changes: record.changes } : { changes: record.changes, source: record.source };
}

/**
 * Reads a project's log into `project` (fresh from emptyProject); no log is no commit. An
 * incomplete last line (a crash during an append: never acknowledged) is cut off with a warning;
 * any other damage throws.
 */
export async function loadLog(project: Project, warn: (message: string) => void): Promise<void> {
  const file = join(project.dir, LOG_FILE);
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (error) {
    if (isCode(error, "ENOENT")) return;
    throw new Error(`${file}: cannot be read (${errorCode(error) ?? String(error)})`);
  }

  let offset = 0;
  for (let line = 1; ; line++) {
    const end = data.indexOf(0x0a, offset);
    if (end === -1) break;
    let record: LogRecord;
    try {
      record = JSON.parse(data.subarray(offset, end).toString("utf8")) as LogRecord;
    } catch {
      throw new Error(`${file}:${line}: corrupt commit log (not JSON)`);
    }
    if (record?.version !== project.version + 1 || typeof record.key !== "string" || !Array.isArray(record.changes)) {
      throw new Error(`${file}:${line}: corrupt commit log (expected version ${project.version + 1})`);
    }
    try {
      applyRecord(project, record, offset);
    } catch (error) {
      throw new Error(`${file}:${line}: corrupt commit log (${errorText(error)})`);
    }
    offset = end + 1;
  }

  if (offset < data.length) {
    warn(`${file}: dropped an incomplete last line (${data.length - offset} bytes)`);
    const handle = await open(file, "r+");
    try {
      await handle.truncate(offset);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  project.logBytes = offset;
}

/** Appends one record and fsyncs it; on failure the log is cut back to its last complete record. */
export async function appendLog(project: Project, record: LogRecord): Promise<void> {
  const line = Buffer.from(JSON.stringify(record) + "\n");
  const file = await open(join(project.dir, LOG_FILE), "a");
  try {
    await writeAll(file, line);
    await file.sync();
    if (project.logBytes === 0) await fsyncDir(project.dir); // the log's own directory entry
  } catch (error) {
    try {
      await file.truncate(project.logBytes);
      await file.sync();
    } catch {
      project.broken = "its commit log is in an unknown state after a failed write; restart the server";
    }
    throw error;
  } finally {
    await file.close().catch(() => {}); // what matters is already fsynced
  }
  applyRecord(project, record, project.logBytes);
  project.logBytes += line.length;
}

/**
 * The records of versions `from` to `to` (at most the head), read from the log as they are
 * consumed, each with the bytes of its line. The byte range is fixed by this call, so commits
 * appended meanwhile are not read.
 */
export function readRecords(project: Project, from: number, to: number): AsyncGenerator<{ record: LogRecord; bytes: number }> {
  const file = join(project.dir, LOG_FILE);
  if (from > to) return linesOf(file, 0, 0);
  return linesOf(file, project.offsets[from - 1]!, to < project.version ? project.offsets[to]! : project.logBytes);
}

async function* linesOf(file: string, start: number, end: number): AsyncGenerator<{ record: LogRecord; bytes: number }> {
  if (start >= end) return;
  let pieces: Buffer[] = [];
  for await (const chunk of createReadStream(file, { start, end: end - 1 }) as AsyncIterable<Buffer>) {
    let offset = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, offset)) {
      pieces.push(chunk.subarray(offset, newline));
      const line = Buffer.concat(pieces);
      pieces = [];
      offset = newline + 1;
      yield { record: JSON.parse(line.toString("utf8")) as LogRecord, bytes: line.length + 1 };
    }
    if (offset < chunk.length) pieces.push(chunk.subarray(offset));
  }
}
