// On-disk state of the reference server:
//   DATA/blobs/ab/cdef...                 content-addressed blobs, written atomically
//   DATA/projects/<id>/commits.ndjson     one JSON line per acknowledged commit
// The files map, version and idempotency keys of each project are rebuilt from its log on open.

import { createHash, randomUUID } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { validateProjectId, type Change, type CommitSource } from "./validate.js";

const LOG_FILE = "commits.ndjson";
const TEMP_PREFIX = ".tmp-";

export interface FileEntry {
  path: string;
  sha256: string;
  size: number;
}

export type CommitOutcome =
  | { kind: "committed"; version: number }
  | { kind: "replayed"; version: number }
  | { kind: "missing_blobs"; missing: string[] }
  | { kind: "size_mismatch"; path: string; size: number; actual: number };

interface LogRecord {
  version: number;
  key: string;
  at: string;
  changes: Change[];
  source?: CommitSource;
}

interface Project {
  version: number;
  files: Map<string, { sha256: string; size: number }>;
  /** Idempotency-Key → version it was answered with. */
  keys: Map<string, number>;
  /** Bytes of the log that hold complete records. */
  logBytes: number;
  /** Set when a failed append could not be undone; the project refuses commits until restart. */
  broken?: Error;
}

export class HashMismatchError extends Error {}

export interface StoreOptions {
  onWarning?: (message: string) => void;
}

export class Store {
  private readonly projects = new Map<string, Project>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly inFlight = new Set<Promise<unknown>>();

  private constructor(readonly dataDir: string) {}

  static async open(dataDir: string, options: StoreOptions = {}): Promise<Store> {
    const store = new Store(dataDir);
    await store.prepareBlobs();
    await store.loadProjects(options.onWarning ?? (() => {}));
    return store;
  }

  /** The current files of a project; an unknown project is version 0 with no files. */
  files(projectId: string): { version: number; files: FileEntry[] } {
    const project = this.projects.get(projectId);
    if (!project) return { version: 0, files: [] };
    const files = [...project.files]
      .map(([path, entry]) => ({ path, ...entry }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { version: project.version, files };
  }

  blobPath(sha256: string): string {
    return join(this.dataDir, "blobs", sha256.slice(0, 2), sha256.slice(2));
  }

  /** Size of a stored blob, or undefined when absent. */
  async blobSize(sha256: string): Promise<number | undefined> {
    try {
      return (await stat(this.blobPath(sha256))).size;
    } catch (error) {
      if (isCode(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  /**
   * Stores the bytes that `feed` writes under `sha256`: temp file in the blob's directory, fsync,
   * rename, fsync of the directory. Throws HashMismatchError (and keeps nothing) when the bytes
   * hash differently.
   */
  putBlob(
    sha256: string,
    feed: (write: (chunk: Buffer) => void | Promise<void>) => Promise<void>,
  ): Promise<"created" | "exists"> {
    return this.track(this.writeBlob(sha256, feed));
  }

  private async writeBlob(
    sha256: string,
    feed: (write: (chunk: Buffer) => void | Promise<void>) => Promise<void>,
  ): Promise<"created" | "exists"> {
    const hash = createHash("sha256");
    const verify = () => {
      const actual = hash.digest("hex");
      if (actual !== sha256) throw new HashMismatchError(`body has SHA-256 ${actual}, not ${sha256}`);
    };

    if ((await this.blobSize(sha256)) !== undefined) {
      await feed((chunk) => {
        hash.update(chunk);
      });
      verify();
      return "exists";
    }

    const target = this.blobPath(sha256);
    const temp = join(dirname(target), `${TEMP_PREFIX}${randomUUID()}`);
    const file = await open(temp, "wx");
    let closed = false;
    let renamed = false;
    try {
      await feed(async (chunk) => {
        hash.update(chunk);
        await writeAll(file, chunk);
      });
      verify();
      await file.sync();
      await file.close();
      closed = true;
      await rename(temp, target);
      renamed = true;
      await fsyncDir(dirname(target));
      return "created";
    } finally {
      if (!closed) await file.close().catch(() => {});
      if (!renamed) await rm(temp, { force: true });
    }
  }

  /**
   * Applies a commit all or nothing, one at a time per project. The record is appended to the
   * project's log and fsynced before this resolves. A known Idempotency-Key answers its first
   * version again and changes nothing.
   */
  commit(projectId: string, key: string, changes: Change[], source?: CommitSource): Promise<CommitOutcome> {
    return this.track(this.serialize(projectId, async (): Promise<CommitOutcome> => {
      let project = this.projects.get(projectId);
      if (!project) this.projects.set(projectId, (project = emptyProject()));
      const answered = project.keys.get(key);
      if (answered !== undefined) return { kind: "replayed", version: answered };
      if (project.broken) throw project.broken;

      const sizes = new Map<string, number | undefined>();
      for (const change of changes) {
        if (change.op !== "put") continue;
        if (!sizes.has(change.sha256)) sizes.set(change.sha256, await this.blobSize(change.sha256));
        const actual = sizes.get(change.sha256);
        if (actual !== undefined && actual !== change.size) {
          return { kind: "size_mismatch", path: change.path, size: change.size, actual };
        }
      }
      const missing = [...sizes].filter(([, size]) => size === undefined).map(([sha]) => sha);
      if (missing.length > 0) return { kind: "missing_blobs", missing };

      const record: LogRecord = { version: project.version + 1, key, at: new Date().toISOString(), changes };
      if (source) record.source = source;
      await this.append(projectId, project, JSON.stringify(record) + "\n");
      applyRecord(project, record);
      return { kind: "committed", version: record.version };
    }));
  }

  /** Resolves once no blob write or commit is in progress. */
  async close(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled(this.inFlight);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const done = () => this.inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  private serialize<T>(projectId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(projectId) ?? Promise.resolve();
    const run = previous.then(task);
    const tail = run.then(
      () => {},
      () => {},
    );
    this.queues.set(projectId, tail);
    void tail.then(() => {
      if (this.queues.get(projectId) === tail) this.queues.delete(projectId);
    });
    return run;
  }

  private async append(projectId: string, project: Project, line: string): Promise<void> {
    const dir = join(this.dataDir, "projects", projectId);
    const isNew = project.logBytes === 0;
    if (isNew) await mkdir(dir, { recursive: true });
    const file = await open(join(dir, LOG_FILE), "a");
    try {
      await writeAll(file, Buffer.from(line));
      await file.sync();
      if (isNew) {
        await fsyncDir(dir);
        await fsyncDir(dirname(dir));
      }
    } catch (error) {
      // Never leave a partial record for the next commit to follow.
      try {
        await file.truncate(project.logBytes);
        await file.sync();
      } catch {
        project.broken = new Error(`commit log of project ${projectId} is in an unknown state; restart the server`);
      }
      throw error;
    } finally {
      await file.close().catch(() => {}); // what matters is already fsynced
    }
    project.logBytes += Buffer.byteLength(line);
  }

  private async prepareBlobs(): Promise<void> {
    const blobs = join(this.dataDir, "blobs");
    await mkdir(join(this.dataDir, "projects"), { recursive: true });
    // All 256 fan-out directories exist from the start, so storing a blob only has to fsync one.
    // Temp files left by a crash are removed.
    const fanOut = Array.from({ length: 256 }, (_, i) => join(blobs, i.toString(16).padStart(2, "0")));
    await Promise.all(
      fanOut.map(async (dir) => {
        await mkdir(dir, { recursive: true });
        for (const name of await readdir(dir)) {
          if (name.startsWith(TEMP_PREFIX)) await rm(join(dir, name), { force: true });
        }
      }),
    );
    await fsyncDir(blobs);
    await fsyncDir(this.dataDir);
  }

  private async loadProjects(warn: (message: string) => void): Promise<void> {
    const root = join(this.dataDir, "projects");
    for (const entry of await readdir(root, { withFileTypes: true })) {
      if (!entry.isDirectory() || validateProjectId(entry.name)) continue;
      const project = await loadLog(join(root, entry.name, LOG_FILE), warn);
      if (project) this.projects.set(entry.name, project);
    }
  }
}

async function loadLog(file: string, warn: (message: string) => void): Promise<Project | undefined> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch (error) {
    if (isCode(error, "ENOENT")) return undefined;
    throw error;
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
    // A crash during an append: that commit was never acknowledged.
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

function emptyProject(): Project {
  return { version: 0, files: new Map(), keys: new Map(), logBytes: 0 };
}

function applyRecord(project: Project, record: LogRecord): void {
  for (const change of record.changes) {
    if (change.op === "put") project.files.set(change.path, { sha256: change.sha256, size: change.size });
    else project.files.delete(change.path);
  }
  project.version = record.version;
  project.keys.set(record.key, record.version);
}

async function writeAll(file: FileHandle, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const { bytesWritten } = await file.write(data, offset);
    offset += bytesWritten;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return; // directories cannot be opened for fsync there
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}
