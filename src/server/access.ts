// The one door (docs/api.md, "Access"): every request that reaches a project's data (the API, its
// batch routes, transcripts, the web view's pages, live polls and downloads) passes through
// Door.open, which turns a credential and a project id into a ProjectAccess: the only handle on
// that project's data, with the scope the credential grants, checked again at every step that
// waits. Routes are given a ProjectAccess, never the store.

import { mayAccess, type Access, type Authority, type Principal } from "./authority.js";
import { HttpError } from "./http.js";
import { checkIdentifier } from "./identifiers.js";
import {
  ProjectNotFoundError,
  type AppendOutcome,
  type BlobPart,
  type BodyFeed,
  type CommitOutcome,
  type FeedQuery,
  type FileEntry,
  type ProjectStore,
  type SessionInfo,
  type StoredBytes,
} from "./store.js";
import type { CommitFeed, CommitRequest } from "../api/types.js";

/** How often a waiting request asks again whether its credential still holds (a revoke ends it within this). */
export const RECHECK_MS = 1000;

/** A bearer token, or the token a web session signed in with; undefined: none was given. */
export type Credential = string | undefined;

export class Door {
  constructor(
    private readonly store: ProjectStore,
    private readonly authority: Authority,
  ) {}

  /** Who holds `credential`; 401 when it is absent, unknown, revoked or expired. */
  async principal(credential: Credential): Promise<Principal> {
    const principal = await this.authority.identify(credential);
    if (!principal) throw unauthorized();
    return principal;
  }

  /**
   * `projectId` opened for `access` by `principal` (who holds `credential`): 400 for an id that is
   * none, 403 outside the principal's scope (before the project's existence is told), 404 for a
   * project never created.
   */
  async open(credential: Credential, principal: Principal, projectId: string, access: Access): Promise<ProjectAccess> {
    checkIdentifier("project", projectId);
    if (!mayAccess(principal, projectId, access)) throw forbidden(principal, projectId, access);
    if (!(await this.store.hasProject(projectId))) throw new ProjectNotFoundError(projectId);
    const recheck = async () => {
      const now = await this.authority.identify(credential);
      if (!now || !mayAccess(now, projectId, access)) throw unauthorized();
    };
    return new ProjectAccess(this.store, projectId, access, recheck, principal.kind === "scoped" ? principal.expires : undefined);
  }
}

/** One project's data, reached with one scope: what a route may do, and nothing else. */
export class ProjectAccess {
  constructor(
    private readonly store: ProjectStore,
    readonly projectId: string,
    readonly access: Access,
    /** Throws 401 once the credential no longer holds (revoked, expired). */
    private readonly recheck: () => Promise<void>,
    /** When the credential expires (epoch ms), if it does. */
    private readonly expires: number | undefined,
  ) {}

  files(version?: number): Promise<{ version: number; files: FileEntry[]; chain: string } | undefined> {
    return this.store.files(this.projectId, version);
  }

  commits(query: FeedQuery): Promise<CommitFeed> {
    if (query.path !== undefined) checkIdentifier("path", query.path);
    return this.store.commits(this.projectId, query);
  }

  sessions(): Promise<SessionInfo[]> {
    return this.store.sessions(this.projectId);
  }

  readEvents(sessionId: string): Promise<StoredBytes | undefined> {
    return this.store.readEvents(this.projectId, checkIdentifier("session", sessionId));
  }

  appendEvents(sessionId: string, offset: number, bytes: Buffer): Promise<AppendOutcome> {
    this.mustWrite();
    return this.store.appendEvents(this.projectId, checkIdentifier("session", sessionId), offset, bytes);
  }

  /** The sizes of the blobs among `hashes` this project may see. */
  blobSizes(hashes: readonly string[]): Promise<Map<string, number>> {
    for (const sha256 of hashes) checkIdentifier("blob", sha256);
    return this.store.blobSizes(this.projectId, hashes);
  }

  readBlob(sha256: string): Promise<StoredBytes | undefined> {
    return this.store.readBlob(this.projectId, checkIdentifier("blob", sha256));
  }

  /** "created" when the project could not see the blob before, whoever else holds it. */
  putBlob(sha256: string, feed: BodyFeed): Promise<"created" | "exists"> {
    this.mustWrite();
    return this.store.putBlob(this.projectId, checkIdentifier("blob", sha256), feed);
  }

  /** putBlob of each part, made durable together (POST /blobs). */
  putBlobs(parts: readonly BlobPart[]): Promise<Array<"created" | "exists">> {
    this.mustWrite();
    for (const { sha256 } of parts) checkIdentifier("blob", sha256);
    return this.store.putBlobs(this.projectId, parts);
  }

  commit(key: string, request: CommitRequest): Promise<CommitOutcome> {
    this.mustWrite();
    return this.store.commit(this.projectId, key, request);
  }

  /**
   * Waits until the head is past `since` (true), `ms` pass or `signal` aborts (false). The
   * credential is asked again every RECHECK_MS and when the wait ends, and the wait ends at its
   * expiry: a revoked or expired credential gets 401, never what was committed meanwhile.
   */
  async waitForCommit(since: number, ms: number, signal: AbortSignal): Promise<boolean> {
    const deadline = Math.min(Date.now() + ms, this.expires ?? Infinity);
    let past = false;
    do {
      const left = deadline - Date.now();
      if (left > 0 && !signal.aborted) past = await this.store.waitForCommit(this.projectId, since, Math.min(left, RECHECK_MS), signal);
      await this.recheck();
    } while (!past && deadline > Date.now() && !signal.aborted);
    return past;
  }

  private mustWrite(): void {
    if (this.access !== "write")
      throw new HttpError(
        403,
        "forbidden",
        `this token may only read project ${JSON.stringify(this.projectId)}: writing needs a write token`,
      );
  }
}

export function unauthorized(): HttpError {
  return new HttpError(
    401,
    "unauthorized",
    "missing, wrong, revoked or expired bearer token",
    {},
    { "www-authenticate": 'Bearer realm="uspark"' },
  );
}

function forbidden(principal: Principal, projectId: string, access: Access): HttpError {
  const id = JSON.stringify(projectId);
  const readOnly = access === "write" && mayAccess(principal, projectId, "read");
  return new HttpError(
    403,
    "forbidden",
    readOnly ? `this token may only read project ${id}: writing needs a write token` : `this token has no access to project ${id}`,
  );
}
