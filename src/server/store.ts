// What the HTTP app needs from a place that keeps projects: the file store (--data) and the
// PostgreSQL store (--db) both implement it.

import type { Change, CommitSource } from "./validate.js";

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

/** The answer to an append at a byte offset of a session's transcript. */
export type AppendOutcome = { kind: "appended"; length: number } | { kind: "offset_mismatch"; length: number };

/** Writes the chunks of a body as they arrive; resolves once the body has been read. */
export type BodyFeed = (write: (chunk: Buffer) => void | Promise<void>) => Promise<void>;

/** A project whose stored state cannot be read: it is answered with an error, others are served. */
export class ProjectUnavailableError extends Error {}

/** The store cannot be reached just now (database down): answered 503 with Retry-After. */
export class StoreUnavailableError extends Error {}

export interface ProjectStore {
  /** The current files of a project; an unknown project is version 0 with no files. */
  files(projectId: string): Promise<{ version: number; files: FileEntry[] }>;
  /** The sizes of the stored blobs among `hashes` (the absent ones are not in the map). */
  blobSizes(hashes: readonly string[]): Promise<Map<string, number>>;
  /** A stored blob's bytes, or undefined when absent. */
  readBlob(sha256: string): Promise<Blob | undefined>;
  /** Stores the bytes `feed` writes under `sha256` (the caller has checked they hash to it); keeps nothing when the feed fails. */
  putBlob(sha256: string, feed: BodyFeed): Promise<"created" | "exists">;
  /** Applies a commit all or nothing; a known Idempotency-Key answers its first version again. */
  commit(projectId: string, key: string, changes: Change[], source?: CommitSource): Promise<CommitOutcome>;
  /** Appends `bytes` at `offset` of a session's transcript, durably, once (see planAppend). */
  appendEvents(projectId: string, sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome>;
  /** A session's transcript so far, or undefined when there is none. */
  readEvents(projectId: string, sessionId: string): Promise<Buffer | undefined>;
  sessions(projectId: string): Promise<{ id: string; length: number }[]>;
  /** Why the store cannot serve requests now, or undefined when it can (GET /readyz). */
  notReady(): Promise<string | undefined>;
  /** Resolves once no write is in progress and resources are released. */
  close(): Promise<void>;
}

/** The store cannot be used at all (data directory unusable, bad database URL): exit 2. */
export class StoreSetupError extends Error {
  readonly code = "EUSAGE";
}
