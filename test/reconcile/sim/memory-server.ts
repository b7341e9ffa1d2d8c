import { hash } from "node:crypto";
import { chainHash, ZERO_CHAIN } from "../../../src/api/chain.js";
import type { Change, CommitFeed, CommitRecord, CommitRequest, CommitSource, Listing } from "../../../src/api/types.js";
import { blobsNamed, checkCommit, filesUnder, pathsPut, requestFingerprint, touchesPath } from "../../../src/server/commit-check.js";
import { ApiError } from "../../../src/transfer/api-error.js";
import { plainCopy } from "./plain-data.js";

/** What a backup of the server holds: its files, history and keys at one version (see restore). */
export interface ServerSnapshot {
  files: Map<string, { sha256: string; size: number }>;
  log: CommitRecord[];
  keys: Map<string, { version: number; request: CommitRequest }>;
}

/**
 * The project API v1.3 in memory (its listing says "1.2" with a chain hash, as the HTTP client reads a 1.3 server), one project, deciding every commit with the reference server's
 * own pure checks (src/server/commit-check.ts: key replay, 409 before 422, all or nothing). Its
 * answers are the client's: values, or the ApiError the HTTP client would make of the status.
 */

/** One-shot hashing: a Hash object per file cost five times as much (the simulation hashes every edit). */
export const sha256 = (bytes: Uint8Array | string) => hash("sha256", bytes, "hex");

export class MemoryServer {
  readonly files = new Map<string, { sha256: string; size: number }>();
  readonly log: CommitRecord[] = [];
  /** The chain hash at each version (docs/api.md, v1.3). */
  private readonly chains: string[] = [ZERO_CHAIN];
  readonly blobs = new Map<string, Uint8Array>();
  /** The writer that sent each version's commit (a restore's source names no session). */
  readonly committers = new Map<number, string>();
  /** Idempotency-Key → the version it was answered with and its request (fingerprinted only when the key comes again). */
  private keys = new Map<string, { version: number; request: CommitRequest }>();

  constructor(private readonly now: () => number) {}

  get version(): number {
    return this.log.length;
  }

  listFiles(version?: number): Listing {
    if (version !== undefined && (version < 0 || version > this.version))
      throw new ApiError("GET /files?version: 404", { status: 404, code: "version_not_found" });
    const at = version === undefined ? this.files : this.filesAt(version);
    const files = [...at].map(([path, f]) => ({ path, ...f })).sort((a, b) => (a.path < b.path ? -1 : 1));
    return { version: version ?? this.version, files, api: "1.2", chain: this.chains[version ?? this.version]! };
  }

  /** The files at an older version (GET /files?version=N, what `uspark restore --at N` reads): the history replayed. */
  private filesAt(version: number): Map<string, { sha256: string; size: number }> {
    const files = new Map<string, { sha256: string; size: number }>();
    for (const commit of this.log.slice(0, version)) {
      for (const change of commit.changes) {
        if (change.op === "delete") files.delete(change.path);
        else files.set(change.path, { sha256: change.sha256, size: change.size });
      }
    }
    return files;
  }

  commitFeed(since: number, options: { limit?: number; path?: string }): CommitFeed {
    const picked = this.log.slice(since).filter((c) => options.path === undefined || touchesPath(c.changes, options.path));
    const commits = plainCopy(picked.slice(0, options.limit ?? 100)).map((c) => ({ ...c, chain: this.chains[c.version]! }));
    return { version: this.version, commits, chain: this.chains[this.version]! };
  }

  commit(changes: Change[], source: CommitSource, key: string): { version: number; chain: string } {
    const request: CommitRequest = plainCopy({ changes, source });
    const answered = this.keys.get(key);
    if (answered) {
      if (requestFingerprint(answered.request) === requestFingerprint(request))
        return { version: answered.version, chain: this.chains[answered.version]! };
      throw new ApiError("POST /commits: 422 idempotency_key_reused", {
        status: 422,
        code: "idempotency_key_reused",
        body: { error: "idempotency_key_reused" },
      });
    }
    const sizes = new Map(
      blobsNamed(request.changes).flatMap((sha) => (this.blobs.has(sha) ? [[sha, this.blobs.get(sha)!.length] as const] : [])),
    );
    const refused = checkCommit(request.changes, {
      sizes,
      current: this.files,
      under: filesUnder(this.files, pathsPut(request.changes)),
      version: this.version,
    });
    if (refused?.kind === "conflict") {
      throw new ApiError("POST /commits: 409 conflict", {
        status: 409,
        code: "conflict",
        body: { error: "conflict", conflicts: refused.conflicts, version: refused.version },
      });
    }
    if (refused?.kind === "missing_blobs") {
      throw new ApiError("POST /commits: 422 missing_blobs", {
        status: 422,
        code: "missing_blobs",
        body: { error: "missing_blobs", missing: refused.missing },
      });
    }
    // The reference server answers a size that is not the blob's as a 400 invalid_request (src/server/v1-routes.ts).
    if (refused)
      throw new ApiError(`POST /commits: 400 invalid_request: ${refused.kind}`, {
        status: 400,
        code: "invalid_request",
        body: { error: "invalid_request" },
      });
    for (const change of request.changes) {
      if (change.op === "delete") this.files.delete(change.path);
      else this.files.set(change.path, { sha256: change.sha256, size: change.size });
    }
    // What the server must refuse (migration 6, commit-check.ts): a path both a file and a directory.
    for (const change of request.changes) {
      for (let i = change.path.indexOf("/"); change.op === "put" && i !== -1; i = change.path.indexOf("/", i + 1)) {
        if (this.files.has(change.path.slice(0, i)))
          throw new Error(`the server holds ${change.path.slice(0, i)} and ${change.path}: a clash it should have refused`);
      }
      const under = change.op === "put" ? [...this.files.keys()].find((p) => p.startsWith(`${change.path}/`)) : undefined;
      if (under !== undefined) throw new Error(`the server holds ${under} and ${change.path}: a clash it should have refused`);
    }
    const version = this.version + 1;
    this.log.push({ version, time: new Date(this.now()).toISOString(), source: request.source, changes: request.changes });
    this.keys.set(key, { version, request });
    this.chains.push(chainHash(this.chains[version - 1]!, request.changes));
    return { version, chain: this.chains[version]! };
  }

  /** A backup of the server as it is now. */
  snapshot(): ServerSnapshot {
    return { files: new Map(this.files), log: [...this.log], keys: new Map(this.keys) };
  }

  /** The server restored from a backup: every commit after it is gone (the blobs stay). */
  restore(backup: ServerSnapshot): void {
    this.files.clear();
    for (const [path, file] of backup.files) this.files.set(path, file);
    this.log.length = 0;
    this.log.push(...backup.log);
    this.chains.length = backup.log.length + 1;
    this.keys = new Map(backup.keys);
  }

  putBlob(sha: string, bytes: Uint8Array): "created" | "present" {
    if (sha256(bytes) !== sha)
      throw new ApiError("PUT /blobs: 400 hash_mismatch", {
        status: 400,
        code: "hash_mismatch",
        body: { error: "hash_mismatch", sha256: sha },
      });
    if (this.blobs.has(sha)) return "present";
    this.blobs.set(sha, new Uint8Array(bytes));
    return "created";
  }

  getBlob(sha: string): Uint8Array {
    const bytes = this.blobs.get(sha);
    if (!bytes) throw new ApiError("GET /blobs: 404 not_found", { status: 404, code: "not_found", body: { error: "not_found" } });
    return new Uint8Array(bytes);
  }
}
