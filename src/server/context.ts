// What every route handler is given.

import type { ProjectStore } from "./store.js";

export interface Limits {
  /** One blob of PUT /blobs/{sha256}. */
  maxBlobBytes: number;
  /** A JSON body (commits, POST /blobs/get). */
  maxJsonBytes: number;
  /** Blob bytes in one POST /blobs request or one POST /blobs/get answer. */
  maxBatchBytes: number;
  /** Parts of POST /blobs, hashes of POST /blobs/get. */
  maxBatchParts: number;
  /** One PUT /sessions/{id}/events body. */
  maxEventsBytes: number;
}

export interface CommitEvent {
  projectId: string;
  version: number;
  changes: number;
}

export interface Context extends RouteContext {
  store: ProjectStore;
}

/** What a route is given besides its ProjectAccess (access.ts): no store, only the door reaches it. */
export interface RouteContext {
  limits: Limits;
  onCommit?: (event: CommitEvent) => void;
  /** Aborts when the server closes: long polls answer at once. */
  closing?: AbortSignal;
}
