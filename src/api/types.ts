/**
 * The project API (docs/api.md: v1 to v1.3) as both sides speak it: the client (src/sync/) and the
 * reference server (src/server/) import these types from here and nowhere else.
 */

import type { WireErrorCode } from "./errors.js";

/**
 * The API version a server says it speaks in `GET /files` (`"api": "1.2"`); v1 servers say
 * nothing. A v1.3 server says "1.2" too and is told by its `chain` field (docs/api.md#v13-additions-a-history-the-client-can-check-filedirectory-clashes-refused):
 * uspark 0.3 compares the field with "1.2" exactly and would take "1.3" for a v1 server.
 */
export type ApiVersion = "1" | "1.1" | "1.2" | "1.3";

/** What the reference server says in `"api"`: it speaks v1.3, told by its chain hashes. */
export const API_VERSION = "1.2" satisfies ApiVersion;

export interface RemoteFile {
  path: string;
  sha256: string;
  size: number;
}

/** `GET /files` (and `GET /files?version=N`). */
export interface Listing {
  version: number;
  files: RemoteFile[];
  /** "1.2" from a v1.2 server; absent from older ones. */
  api?: ApiVersion;
  /** v1.3: the chain hash at `version` (src/api/chain.ts). */
  chain?: string;
}

/**
 * What a change requires of the path before it applies (v1.2): the path holds this hash now, or
 * (`null`) the path is absent. Omitted: no requirement (a v1 commit).
 */
export type Expect = string | null;

export type Change =
  { op: "put"; path: string; sha256: string; size: number; expect?: Expect } | { op: "delete"; path: string; expect?: Expect };

export interface CommitSource {
  agent?: string;
  sessionId?: string;
  /** The machine's host name (os.hostname()), so that a person tells two machines apart (docs/api.md). */
  host?: string;
}

/** The body of `POST /commits` (with an `Idempotency-Key` header). */
export interface CommitRequest {
  changes: Change[];
  source?: CommitSource;
}

/** One path whose expectation failed, as a 409 `conflict` names it: its current state (`null`: absent). */
export interface ConflictEntry {
  path: string;
  sha256: string | null;
  size: number | null;
  /**
   * v1.3: the commit would leave this path a file and a directory at once: the other path of the
   * clash (the file above it, or a file under it). Its `sha256` and `size` are the path's own.
   */
  clash?: string;
}

/** The body of a 409 `conflict` answer to `POST /commits`: nothing was applied. */
export interface ConflictAnswer {
  error: "conflict";
  message: string;
  conflicts: ConflictEntry[];
  /** The project's version now. */
  version: number;
}

/** One commit as `GET /commits` lists it: each change as it was sent (with its `expect`). */
export interface CommitRecord {
  version: number;
  /** ISO 8601, when the server applied it. */
  time: string;
  source?: CommitSource;
  changes: Change[];
  /** v1.3: the chain hash at this version. */
  chain?: string;
}

/** `GET /commits?since=N&limit=M[&path=P][&wait=ms]`: `version` is the head, commits oldest first. */
export interface CommitFeed {
  version: number;
  commits: CommitRecord[];
  /** v1.3: the head's chain hash. */
  chain?: string;
  api?: ApiVersion;
}

/** The answer to an applied (or replayed) `POST /commits`. */
export interface CommitAnswer {
  version: number;
  /** v1.3: the chain hash at `version`. */
  chain?: string;
  api?: ApiVersion;
}

/** One project in `GET /api/projects`. */
export interface ProjectSummary {
  id: string;
  version: number;
  /** How many files it holds now. */
  files: number;
  /** ISO 8601 time of its last commit (or of its creation). */
  updated: string;
}

/** `GET /commits` paging and waiting limits (docs/api.md, v1.2). */
export const COMMITS_DEFAULT_LIMIT = 100;
export const COMMITS_MAX_LIMIT = 1000;
export const COMMITS_MAX_WAIT_MS = 60_000;

/** The device flow of `uspark login` (RFC 8628), as both sides name it. */
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the polling interval, on both sides. */
export const SLOW_DOWN_SECONDS = 5;

/** Names for some `error` codes of the API's JSON error bodies (every code: src/api/errors.ts). */
export const API_ERRORS = {
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  projectNotFound: "project_not_found",
  exists: "exists",
  conflict: "conflict",
  missingBlobs: "missing_blobs",
  invalidPath: "invalid_path",
  invalidRequest: "invalid_request",
  idempotencyKeyReused: "idempotency_key_reused",
  gone: "gone",
  versionNotFound: "version_not_found",
  /** 421: the Host is not a name the server serves (docs/api.md, "Host and Origin"). */
  misdirectedRequest: "misdirected_request",
  /** 403: a browser's request from another site that would change something. */
  crossSiteRequest: "cross_site_request",
} as const satisfies Record<string, WireErrorCode>;
