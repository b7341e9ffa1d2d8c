// Per-project commit logs: DATA/projects/<id>/commits.ndjson, one JSON line per acknowledged
// commit. A project's files map, version and idempotency keys are rebuilt from its log on open.

import { mkdir, open, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fsyncDir, isCode, writeAll } from "../fsutil.js";
import type { Change, CommitSource } from "../validate.js";

export const LOG_FILE = "commits.ndjson";

export interface LogRecord {
  version: number;
  key: string;
  at: string;
  changes: Change[];
  source?: CommitSource;
}

export interface Project {
  version: number;
  files: Map<string, { sha256: string; size: number }>;
  /** Idempotency-Key → version it was answered with. */
  keys: Map<string, number>;
  /** Bytes of the log that hold complete records. */
  logBytes: number;
  /** Why the project refuses requests (corrupt log, or a failed append that could not be undone). */
  broken?: string;
}

export function emptyProject(): Project {
  return { version: 0, files: new Map(), keys: new Map(), logBytes: 0 };
}

export function applyRecord(project: Project, record: LogRecord): void {
  for (const change of record.changes) {
    if (change.op === "put") project.files.set(change.path, { sha256: change.sha256, size: change.size });
    else project.files.delete(change.path);
  }
  project.version = record.version;
  project.keys.set(record.key, record.version);
}

/**
 * Reads a project's log; undefined when there is none. An incomplete last line (a crash during
 * an append: never acknowledged) is cut off with a warning; any other damage throws.
 */
export async function loadLog(file: string, warn: (message: string) => void): Promise<Project | undefined> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (error) {
    if (isCode(error, "ENOENT")) return undefined;
    throw new Error(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }

  const project = emptyProject();
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
    applyRecord(project, record);
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
  return project;
}

/** Appends one record and fsyncs it; on failure the log is cut back to its last complete record. */
export async function appendLog(dir: string, project: Project, record: LogRecord): Promise<void> {
  const line = Buffer.from(JSON.stringify(record) + "\n");
  const isNew = project.logBytes === 0;
  if (isNew) await mkdir(dir, { recursive: true });
  const file = await open(join(dir, LOG_FILE), "a");
  try {
    await writeAll(file, line);
    await file.sync();
    if (isNew) {
      await fsyncDir(dir);
      await fsyncDir(dirname(dir));
    }
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
  project.logBytes += line.length;
  applyRecord(project, record);
}
