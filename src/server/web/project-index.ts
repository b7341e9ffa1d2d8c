// What the web view's tree and sessions pages need of a project, kept per project and brought up
// to date from the commits past the version it was made at: each file's size and last change,
// directories listed one at a time, and the commits of each session. Fast at 50,000 files: a page
// costs a scan of the directory's own range of the sorted paths, never a read of the whole log.

import type { CommitRecord } from "../../api/types.js";
import type { ProjectAccess } from "../access.js";

export interface Change {
  version: number;
  time: string;
}

export interface FileRow extends Change {
  sha256: string;
  size: number;
}

/** One entry of a directory: a file, or a directory with the count, size and last change of all under it. */
export type DirEntry =
  | { kind: "file"; name: string; path: string; size: number; version: number; time: string }
  | { kind: "dir"; name: string; path: string; files: number; size: number; version: number; time: string };

export interface CommitSummary extends Change {
  agent: string | undefined;
  host: string | undefined;
  changes: number;
  /** Its first SUMMARY_PATHS paths: a session page links each file an agent changed to the commit that carried it. */
  paths: string[];
}

/** Paths kept of a session's commit (a commit of 10,000 files must not fill memory). */
export const SUMMARY_PATHS = 100;

/** Listings kept per index: a person browses a few directories, a crawler must not fill memory. */
const MAX_LISTINGS = 256;

export class ProjectIndex {
  version = 0;
  readonly files = new Map<string, FileRow>();
  readonly commitsBySession = new Map<string, CommitSummary[]>();
  private sorted: string[] | undefined;
  /** Directories listed at this version (a listing of the root scans every path): dropped at the next commit. */
  private readonly listings = new Map<string, DirEntry[] | undefined>();

  apply(commit: CommitRecord): void {
    this.listings.clear();
    const change = { version: commit.version, time: commit.time };
    for (const c of commit.changes) {
      if (c.op === "put") {
        if (!this.files.has(c.path)) this.sorted = undefined;
        this.files.set(c.path, { ...change, sha256: c.sha256, size: c.size });
      } else if (this.files.delete(c.path)) this.sorted = undefined;
    }
    const sessionId = commit.source?.sessionId;
    if (sessionId !== undefined) {
      const list = this.commitsBySession.get(sessionId) ?? [];
      const paths = commit.changes.slice(0, SUMMARY_PATHS).map((c) => c.path);
      list.push({ ...change, agent: commit.source?.agent, host: commit.source?.host, changes: commit.changes.length, paths });
      this.commitsBySession.set(sessionId, list);
    }
    this.version = commit.version;
  }

  /** The entries of directory `dir` ("" is the root), directories first, each group by name. */
  list(dir: string): DirEntry[] | undefined {
    if (!this.listings.has(dir)) {
      if (this.listings.size >= MAX_LISTINGS) this.listings.delete(this.listings.keys().next().value!);
      this.listings.set(dir, this.scan(dir));
    }
    return this.listings.get(dir);
  }

  private scan(dir: string): DirEntry[] | undefined {
    const paths = (this.sorted ??= [...this.files.keys()].sort(byCodeUnit));
    const prefix = dir === "" ? "" : `${dir}/`;
    const dirs = new Map<string, Extract<DirEntry, { kind: "dir" }>>();
    const files: DirEntry[] = [];
    for (let i = lowerBound(paths, prefix); i < paths.length && paths[i]!.startsWith(prefix); i++) {
      const path = paths[i]!;
      const row = this.files.get(path)!;
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash < 0) {
        files.push({ kind: "file", name: rest, path, size: row.size, version: row.version, time: row.time });
        continue;
      }
      const name = rest.slice(0, slash);
      const entry = dirs.get(name) ?? { kind: "dir", name, path: prefix + name, files: 0, size: 0, version: 0, time: "" };
      entry.files++;
      entry.size += row.size;
      if (row.version > entry.version) Object.assign(entry, { version: row.version, time: row.time });
      dirs.set(name, entry);
    }
    if (dir !== "" && dirs.size === 0 && files.length === 0) return undefined;
    return [...dirs.values(), ...files];
  }
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first index whose path is not before `prefix`. */
function lowerBound(paths: string[], prefix: string): number {
  let low = 0;
  let high = paths.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (paths[middle]! < prefix) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The commits read per request of the feed while an index catches up. */
const FEED_PAGE = 1000;

/** One index per project, caught up with the store on each use (one catch-up at a time per project). */
export class ProjectIndexes {
  private readonly byProject = new Map<string, Promise<ProjectIndex>>();

  constructor(private readonly maxFeedBytes: number) {}

  /** The index of the project `project` opens, caught up through it (the door's handle, never the store). */
  current(project: ProjectAccess): Promise<ProjectIndex> {
    const { projectId } = project;
    const previous = this.byProject.get(projectId) ?? Promise.resolve(new ProjectIndex());
    // A failed catch-up is not kept: the next page starts again from scratch.
    const next = previous.catch(() => new ProjectIndex()).then((index) => this.catchUp(project, index));
    this.byProject.set(projectId, next);
    return next;
  }

  private async catchUp(project: ProjectAccess, index: ProjectIndex): Promise<ProjectIndex> {
    for (;;) {
      const feed = await project.commits({ since: index.version, limit: FEED_PAGE, maxBytes: this.maxFeedBytes });
      for (const commit of feed.commits) index.apply(commit);
      if (feed.commits.length === 0 || index.version >= feed.version) return index;
    }
  }
}
