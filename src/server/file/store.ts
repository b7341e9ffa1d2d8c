// The file store behind `uspark serve --data DIR`:
//   DATA/blobs/ab/cdef...                    content-addressed blobs (blobs.ts)
//   DATA/projects/<dir>/project.json         the project's id and creation time (projects.ts)
//   DATA/projects/<dir>/commits.ndjson       one line per acknowledged commit (log.ts)
//   DATA/projects/<dir>/sessions/<s>.ndjson  session transcripts (sessions.ts)

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { CommitFeed, CommitRecord, CommitRequest, ProjectSummary } from "../../api/types.js";
import { blobsNamed, checkCommit, filesUnder, pathsPut, requestFingerprint, touchesPath } from "../commit-check.js";
import { fsyncDir } from "../fsutil.js";
import { SerialTasks } from "../serial.js";
import {
  ProjectNotFoundError,
  ProjectUnavailableError,
  StoreSetupError,
  type AppendOutcome,
  type BlobPart,
  type BodyFeed,
  type CommitOutcome,
  type FeedQuery,
  type FileEntry,
  type ProjectStore,
  type SessionInfo,
  type StoredBytes,
} from "../store.js";
import { CommitWaiters } from "../waiters.js";
import { mapLimit } from "../../util/map-limit.js";
import { BlobFiles } from "./blobs.js";
import { FileCredentials } from "./credentials.js";
import { appendLog, applyChanges, emptyProject, loadLog, nextChain, readRecords, type LogRecord, type Project } from "./log.js";
import { createProjectDir, findProjects, type FoundProject } from "./projects.js";
import { TranscriptFiles } from "./sessions.js";
import { loadUploaded, recordUploaded } from "./visible-blobs.js";
import { errorCode, errorText } from "../../errors/text.js";

export interface FileStoreOptions {
  onWarning?: (message: string) => void;
}

export class FileStore implements ProjectStore {
  private readonly projectsById = new Map<string, Project>();
  private readonly tasks = new SerialTasks();
  private readonly waiters = new CommitWaiters();
  private readonly blobs: BlobFiles;
  private readonly transcripts: TranscriptFiles;

  private constructor(
    readonly dataDir: string,
    readonly credentials: FileCredentials,
  ) {
    this.blobs = new BlobFiles(join(dataDir, "blobs"));
    this.transcripts = new TranscriptFiles((projectId) => this.project(projectId).dir);
  }

  /**
   * Opens (creating) the data directory. One that cannot be used at all throws StoreSetupError;
   * a project whose log is damaged is reported through onWarning and refused, the others served.
   */
  static async open(dataDir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const warn = options.onWarning ?? (() => {});
    let store: FileStore;
    let found: FoundProject[];
    try {
      store = new FileStore(dataDir, await FileCredentials.open(dataDir));
      await mkdir(store.projectsDir, { recursive: true });
      await store.blobs.prepare();
      await fsyncDir(dataDir);
      found = await findProjects(store.projectsDir, warn);
    } catch (error) {
      const reason = errorCode(error) ?? errorText(error);
      throw new StoreSetupError(`data directory ${dataDir} cannot be used (${reason})`);
    }
    for (const project of found) await store.loadProject(project, warn);
    return store;
  }

  private get projectsDir(): string {
    return join(this.dataDir, "projects");
  }

  /** Projects whose log is damaged are left out: they are answered 500 until repaired. */
  async projects(): Promise<ProjectSummary[]> {
    return [...this.projectsById.values()]
      .filter((project) => !project.broken)
      .map(summaryOf)
      .sort((a, b) => compare(a.id, b.id));
  }

  createProject(projectId: string): Promise<ProjectSummary | undefined> {
    return this.tasks.run(`project:${projectId}`, async () => {
      if (this.projectsById.has(projectId)) return undefined;
      const created = new Date().toISOString();
      const dir = await createProjectDir(this.projectsDir, projectId, created);
      const project = emptyProject(projectId, dir, created);
      this.projectsById.set(projectId, project);
      return summaryOf(project);
    });
  }

  async hasProject(projectId: string): Promise<boolean> {
    return this.projectsById.has(projectId);
  }

  async files(projectId: string, version?: number): Promise<{ version: number; files: FileEntry[]; chain: string } | undefined> {
    const project = this.usable(projectId);
    if (version !== undefined && version > project.version) return undefined;
    if (version === undefined || version === project.version)
      return { version: project.version, files: listed(project.files), chain: project.chains[project.version]! };
    // An older version: the log replayed up to it (read from disk, held as one files map).
    const files = new Map<string, { sha256: string; size: number }>();
    for await (const { record } of readRecords(project, 1, version)) applyChanges(files, record.changes);
    return { version, files: listed(files), chain: project.chains[version]! };
  }

  async commits(projectId: string, query: FeedQuery): Promise<CommitFeed> {
    const project = this.usable(projectId);
    const head = project.version;
    const commits: CommitRecord[] = [];
    let bytes = 0;
    for await (const { record, bytes: size } of readRecords(project, query.since + 1, head)) {
      if (query.path !== undefined && !touchesPath(record.changes, query.path)) continue;
      if (commits.length === query.limit || (commits.length > 0 && bytes + size > query.maxBytes)) break;
      bytes += size;
      commits.push({ ...commitRecordOf(record), chain: project.chains[record.version]! });
    }
    return { version: head, commits, chain: project.chains[head]! };
  }

  waitForCommit(projectId: string, since: number, ms: number, signal: AbortSignal): Promise<boolean> {
    return this.waiters.waitPast(projectId, since, ms, signal, () => this.project(projectId).version);
  }

  waiting(): number {
    return this.waiters.size;
  }

  async blobSizes(projectId: string, hashes: readonly string[]): Promise<Map<string, number>> {
    const { visible } = this.usable(projectId);
    const sizes = await mapLimit(
      hashes.filter((sha256) => visible.has(sha256)),
      16,
      async (sha256) => [sha256, await this.blobs.size(sha256)] as const,
    );
    return new Map(sizes.flatMap(([sha256, size]) => (size === undefined ? [] : [[sha256, size] as const])));
  }

  async readBlob(projectId: string, sha256: string): Promise<StoredBytes | undefined> {
    return this.usable(projectId).visible.has(sha256) ? this.blobs.read(sha256) : undefined;
  }

  putBlob(projectId: string, sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    const project = this.usable(projectId);
    const seen = project.visible.has(sha256);
    return this.tasks.track(
      (async () => {
        await this.blobs.write(sha256, feed, !seen);
        if (seen || project.visible.has(sha256)) return seen ? "exists" : "created";
        await recordUploaded(project.dir, [sha256]);
        project.visible.add(sha256);
        return "created";
      })(),
    );
  }

  /**
   * The blobs the project could not see go into one pack (made durable once), then into its
   * blobs.txt (one append, one fsync); those it could see are only read.
   */
  putBlobs(projectId: string, parts: readonly BlobPart[]): Promise<Array<"created" | "exists">> {
    const project = this.usable(projectId);
    return this.tasks.track(
      (async () => {
        const seen = await mapLimit(
          parts,
          16,
          async ({ sha256 }) => project.visible.has(sha256) && (await this.blobs.size(sha256)) !== undefined,
        );
        for (const [i, part] of parts.entries()) if (seen[i]) await part.feed(() => {}); // read (and checked by the feed) all the same
        const fresh = parts.filter((_, i) => !seen[i]);
        await this.blobs.writePack(fresh);
        const record = [...new Set(fresh.map(({ sha256 }) => sha256))].filter((sha256) => !project.visible.has(sha256));
        await recordUploaded(project.dir, record);
        for (const sha256 of record) project.visible.add(sha256);
        return seen.map((was) => (was ? "exists" : "created"));
      })(),
    );
  }

  /** One commit at a time per project; the record is fsynced in the log before this resolves. */
  commit(projectId: string, key: string, request: CommitRequest): Promise<CommitOutcome> {
    return this.tasks.run(`commit:${projectId}`, async (): Promise<CommitOutcome> => {
      const project = this.project(projectId);
      const fingerprint = requestFingerprint(request);
      const answered = project.keys.get(key);
      if (answered)
        return answered.fingerprint === fingerprint
          ? { kind: "replayed", version: answered.version, chain: project.chains[answered.version]! }
          : { kind: "key_reused" };
      if (project.broken) throw unavailable(projectId);

      const { changes, source } = request;
      const sizes = await this.blobSizes(projectId, blobsNamed(changes));
      // Only a put over a directory needs the files under it, and only then are they looked for.
      const under = filesUnder(
        project.files,
        pathsPut(changes).filter((path) => project.dirs.has(path)),
      );
      const refused = checkCommit(changes, { sizes, current: project.files, under, version: project.version });
      if (refused) return refused;

      const record: LogRecord = {
        version: project.version + 1,
        key,
        at: new Date().toISOString(),
        changes,
        chain: nextChain(project, changes),
      };
      if (source) record.source = source;
      await appendLog(project, record);
      this.waiters.committed(projectId, record.version);
      return { kind: "committed", version: record.version, chain: record.chain! };
    });
  }

  appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome> {
    return this.tasks.run(`session:${projectId}/${sessionId}`, () => this.transcripts.append(projectId, sessionId, offset, bytes));
  }

  readEvents(projectId: string, sessionId: string): Promise<StoredBytes | undefined> {
    return this.transcripts.read(projectId, sessionId);
  }

  sessions(projectId: string): Promise<SessionInfo[]> {
    return this.transcripts.list(projectId);
  }

  async notReady(): Promise<string | undefined> {
    return undefined;
  }

  close(): Promise<void> {
    return this.tasks.idle();
  }

  private project(projectId: string): Project {
    const project = this.projectsById.get(projectId);
    if (!project) throw new ProjectNotFoundError(projectId);
    return project;
  }

  /** The project, refused when its data is damaged. */
  private usable(projectId: string): Project {
    const project = this.project(projectId);
    if (project.broken) throw unavailable(projectId);
    return project;
  }

  private async loadProject(found: FoundProject, warn: (message: string) => void): Promise<void> {
    const project = emptyProject(found.id, found.dir, found.created);
    try {
      await loadLog(project, warn);
      await loadUploaded(found.dir, project.visible);
      this.projectsById.set(found.id, project);
    } catch (error) {
      warn(`project ${found.id} is unavailable: ${errorText(error)}`);
      this.projectsById.set(found.id, { ...emptyProject(found.id, found.dir, found.created), broken: errorText(error) });
    }
  }
}

function summaryOf(project: Project): ProjectSummary {
  return { id: project.id, version: project.version, files: project.files.size, updated: project.updated };
}

function commitRecordOf(record: LogRecord): CommitRecord {
  return { version: record.version, time: record.at, ...(record.source ? { source: record.source } : {}), changes: record.changes };
}

function listed(files: Map<string, { sha256: string; size: number }>): FileEntry[] {
  return [...files].map(([path, entry]) => ({ path, ...entry })).sort((a, b) => compare(a.path, b.path));
}

/** Code-unit order, the same for every locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function unavailable(projectId: string): ProjectUnavailableError {
  return new ProjectUnavailableError(`project ${projectId} is unavailable: its data on the server is damaged (see the server's log)`);
}
