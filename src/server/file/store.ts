// The file store behind `uspark serve --data DIR`:
//   DATA/blobs/ab/cdef...                   content-addressed blobs (blobs.ts)
//   DATA/projects/<id>/commits.ndjson       one line per acknowledged commit (log.ts)
//   DATA/projects/<id>/sessions/<s>.ndjson  session transcripts (sessions.ts)

import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { fsyncDir } from "../fsutil.js";
import { SerialTasks } from "../serial.js";
import {
  ProjectUnavailableError,
  StoreSetupError,
  type AppendOutcome,
  type BodyFeed,
  type CommitOutcome,
  type FileEntry,
  type ProjectStore,
} from "../store.js";
import { validateProjectId, type Change, type CommitSource } from "../validate.js";
import { blobsNamed, checkBlobs } from "../commit-check.js";
import { mapLimit } from "../../map-limit.js";
import { BlobFiles } from "./blobs.js";
import { appendLog, emptyProject, loadLog, LOG_FILE, type LogRecord, type Project } from "./log.js";
import { TranscriptFiles } from "./sessions.js";

export interface FileStoreOptions {
  onWarning?: (message: string) => void;
}

export class FileStore implements ProjectStore {
  private readonly projects = new Map<string, Project>();
  private readonly tasks = new SerialTasks();
  private readonly blobs: BlobFiles;
  private readonly transcripts: TranscriptFiles;

  private constructor(readonly dataDir: string) {
    this.blobs = new BlobFiles(join(dataDir, "blobs"));
    this.transcripts = new TranscriptFiles(this.projectsDir);
  }

  /**
   * Opens (creating) the data directory. One that cannot be used at all throws StoreSetupError;
   * a project whose log is damaged is reported through onWarning and refused, the others served.
   */
  static async open(dataDir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const store = new FileStore(dataDir);
    let names: string[];
    try {
      await mkdir(store.projectsDir, { recursive: true });
      await store.blobs.prepare();
      await fsyncDir(dataDir);
      // Only directories are projects: a stray file (.DS_Store) is not a damaged one.
      names = (await readdir(store.projectsDir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new StoreSetupError(`data directory ${dataDir} cannot be used (${reason})`);
    }
    await store.loadProjects(names, options.onWarning ?? (() => {}));
    return store;
  }

  private get projectsDir(): string {
    return join(this.dataDir, "projects");
  }

  async files(projectId: string): Promise<{ version: number; files: FileEntry[] }> {
    const project = this.projects.get(projectId);
    if (!project) return { version: 0, files: [] };
    if (project.broken) throw unavailable(projectId);
    const files = [...project.files]
      .map(([path, entry]) => ({ path, ...entry }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { version: project.version, files };
  }

  async blobSizes(hashes: readonly string[]): Promise<Map<string, number>> {
    const sizes = await mapLimit(hashes, 16, async (sha256) => [sha256, await this.blobs.size(sha256)] as const);
    return new Map(sizes.flatMap(([sha256, size]) => (size === undefined ? [] : [[sha256, size] as const])));
  }

  readBlob(sha256: string): Promise<Blob | undefined> {
    return this.blobs.read(sha256);
  }

  putBlob(sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    return this.tasks.track(this.blobs.write(sha256, feed));
  }

  /** One commit at a time per project; the record is fsynced in the log before this resolves. */
  commit(projectId: string, key: string, changes: Change[], source?: CommitSource): Promise<CommitOutcome> {
    return this.tasks.run(`commit:${projectId}`, async (): Promise<CommitOutcome> => {
      let project = this.projects.get(projectId);
      if (!project) this.projects.set(projectId, (project = emptyProject()));
      const answered = project.keys.get(key);
      if (answered !== undefined) return { kind: "replayed", version: answered };
      if (project.broken) throw unavailable(projectId);

      const refused = checkBlobs(changes, await this.blobSizes(blobsNamed(changes)));
      if (refused) return refused;

      const record: LogRecord = { version: project.version + 1, key, at: new Date().toISOString(), changes };
      if (source) record.source = source;
      await appendLog(join(this.projectsDir, projectId), project, record);
      return { kind: "committed", version: record.version };
    });
  }

  appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome> {
    return this.tasks.run(`session:${projectId}/${sessionId}`, () =>
      this.transcripts.append(projectId, sessionId, offset, bytes),
    );
  }

  readEvents(projectId: string, sessionId: string): Promise<Buffer | undefined> {
    return this.transcripts.read(projectId, sessionId);
  }

  sessions(projectId: string): Promise<{ id: string; length: number }[]> {
    return this.transcripts.list(projectId);
  }

  async notReady(): Promise<string | undefined> {
    return undefined;
  }

  close(): Promise<void> {
    return this.tasks.idle();
  }

  private async loadProjects(names: string[], warn: (message: string) => void): Promise<void> {
    for (const name of names) {
      if (validateProjectId(name)) continue;
      try {
        const project = await loadLog(join(this.projectsDir, name, LOG_FILE), warn);
        if (project) this.projects.set(name, project);
      } catch (error) {
        warn(`project ${name} is unavailable: ${(error as Error).message}`);
        this.projects.set(name, { ...emptyProject(), broken: (error as Error).message });
      }
    }
  }
}

function unavailable(projectId: string): ProjectUnavailableError {
  return new ProjectUnavailableError(
    `project ${projectId} is unavailable: its data on the server is damaged (see the server's log)`,
  );
}
