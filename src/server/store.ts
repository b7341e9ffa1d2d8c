// What the HTTP app needs from a place that keeps projects: the file store (--data) and the
// PostgreSQL store (--db) both implement it.

import type { CredentialStore } from "./credentials.js";
import type { CommitFeed, CommitRequest, ConflictEntry, ProjectSummary, RemoteFile } from "../api/types.js";
import { UsparkError } from "../errors/base.js";

export type FileEntry = RemoteFile;

export type CommitOutcome =
  | { kind: "committed"; version: number; chain: string }
  | { kind: "replayed"; version: number; chain: string }
  /** The Idempotency-Key was bound to another body by an applied commit. */
  | { kind: "key_reused" }
  | { kind: "conflict"; conflicts: ConflictEntry[]; version: number }
  | { kind: "missing_blobs"; missing: string[] }
  | { kind: "size_mismatch"; path: string; size: number; actual: number };

/** The answer to an append at a byte offset of a session's transcript. */
/** One session's transcript as `GET /sessions` lists it. */
export interface SessionInfo {
  id: string;
  /** Bytes appended so far. */
  length: number;
  /** When bytes were last appended (ISO 8601, UTC). */
  updated: string;
}

export type AppendOutcome = { kind: "appended"; length: number } | { kind: "offset_mismatch"; length: number };

/** Writes the chunks of a body as they arrive; resolves once the body has been read. */
export type BodyFeed = (write: (chunk: Buffer) => void | Promise<void>) => Promise<void>;

/** One blob of a pack upload: its hash (checked), its size, its bytes. */
export interface BlobPart {
  sha256: string;
  size: number;
  feed: BodyFeed;
}

/** Stored bytes (a blob, a transcript): their size, and the bytes read as they are consumed (never held whole). */
export interface StoredBytes {
  size: number;
  /** The bytes from offset `from` (default 0) to the end, without reading those before it (a page of a large file or transcript). */
  chunks(from?: number): AsyncIterable<Uint8Array>;
}

/** Which commits GET /commits asks for (docs/api.md, v1.2). */
export interface FeedQuery {
  /** Commits after this version. */
  since: number;
  /** At most this many commits. */
  limit: number;
  /** Only commits with a change at this path or under it. */
  path?: string;
  /** Stop before the commits' changes pass this many bytes (at least one commit is answered). */
  maxBytes: number;
}

/** A project whose stored state cannot be read: it is answered with an error, others are served. */
export class ProjectUnavailableError extends UsparkError {
  readonly code = "project_unavailable";
}

/** No project has this id (never created): answered 404 project_not_found. */
export class ProjectNotFoundError extends UsparkError {
  readonly code = "project_not_found";
  constructor(readonly projectId: string) {
    super(`no project ${JSON.stringify(projectId)}: create it first (POST /api/projects)`);
  }
}

/** The store cannot be reached just now (database down): answered 503 with Retry-After. */
export class StoreUnavailableError extends UsparkError {
  readonly code = "store_unavailable";
}

export interface ProjectStore {
  /** Scoped tokens and waiting device logins, kept where every process on this store sees them. */
  readonly credentials: CredentialStore;
  /** Every project, sorted by id. */
  projects(): Promise<ProjectSummary[]>;
  /** Creates an empty project at version 0; undefined when it exists already. */
  createProject(projectId: string): Promise<ProjectSummary | undefined>;
  hasProject(projectId: string): Promise<boolean>;
  /**
   * The files of a project now, or as of `version` (undefined when `version` is past the head).
   * Throws ProjectNotFoundError for a project never created.
   */
  files(projectId: string, version?: number): Promise<{ version: number; files: FileEntry[]; chain: string } | undefined>;
  /** The commits after `query.since`, oldest first (each with its chain hash), with the head version and its chain hash. */
  commits(projectId: string, query: FeedQuery): Promise<CommitFeed>;
  /**
   * Resolves once the project's head is past `since` (on any replica of a shared store: true),
   * after `ms`, or when `signal` aborts (false); holds no connection while it waits.
   */
  waitForCommit(projectId: string, since: number, ms: number, signal: AbortSignal): Promise<boolean>;
  /** How many waitForCommit calls are in progress. */
  waiting(): number;
  /**
   * The sizes of the blobs among `hashes` the project may see (the others are not in the map).
   * Content is stored once for all projects, but a blob is visible to a project only once it was
   * uploaded to it or is named by one of its commits (docs/api.md).
   */
  blobSizes(projectId: string, hashes: readonly string[]): Promise<Map<string, number>>;
  /** A blob the project may see, or undefined. */
  readBlob(projectId: string, sha256: string): Promise<StoredBytes | undefined>;
  /**
   * Stores the bytes `feed` writes under `sha256` (the caller has checked they hash to it) and makes
   * the blob visible to the project; keeps nothing when the feed fails. "exists" only when the
   * project could see it already: whether another project holds it is never told.
   */
  putBlob(projectId: string, sha256: string, feed: BodyFeed): Promise<"created" | "exists">;
  /**
   * putBlob of many blobs at once (POST /blobs), each answered as putBlob would, made durable
   * together: all are stored before it resolves, none when it throws. Each feed hands a fresh
   * buffer a chunk (the store may keep it) and the announced `size` in all.
   */
  putBlobs(projectId: string, parts: readonly BlobPart[]): Promise<Array<"created" | "exists">>;
  /**
   * Applies a commit all or nothing, in the order of docs/api.md: a known Idempotency-Key answers
   * its first version again (the same request) or key_reused (another one), then checkCommit.
   */
  commit(projectId: string, key: string, request: CommitRequest): Promise<CommitOutcome>;
  /** Appends `bytes` at `offset` of a session's transcript, durably, once (see planAppend). */
  appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome>;
  /** A session's transcript as long as it is now, or undefined when there is none. */
  readEvents(projectId: string, sessionId: string): Promise<StoredBytes | undefined>;
  /** The project's transcripts, by id. */
  sessions(projectId: string): Promise<SessionInfo[]>;
  /** Why the store cannot serve requests now, or undefined when it can (GET /readyz). */
  notReady(): Promise<string | undefined>;
  /** Resolves once no write is in progress and resources are released. */
  close(): Promise<void>;
}

/** The store cannot be used at all (data directory unusable, bad database URL): exit 2. */
export class StoreSetupError extends UsparkError {
  readonly code = "EUSAGE";
}
