import type { Change, CommitFeed, CommitSource, Listing } from "../api/types.js";
import { transferTimeMs, type ApiClient } from "./client.js";
import type { RetryingCaller } from "./retry.js";
import { Transfer, type BlobApi } from "./blobs.js";
import type { Reporter } from "../report/reporter.js";

/**
 * One project's API as the reconcile uses it: every request under the session's retry policy,
 * blobs through the transfer layer. The real API is the HTTP client; the simulation puts a server
 * in memory behind the same interface (with dropped, repeated and reordered answers).
 */
export type ProjectApi = BlobApi & Pick<ApiClient, "listFiles" | "commitFeed" | "commit">;

export interface ProjectRemoteOptions {
  concurrency: number;
  report: Reporter;
  /** Blob hashes the server is known to hold (grown by every answer). */
  known?: Set<string>;
}

export class ProjectRemote {
  readonly transfer: Transfer;

  constructor(
    readonly api: ProjectApi,
    readonly caller: RetryingCaller,
    options: ProjectRemoteOptions,
  ) {
    this.transfer = new Transfer(api, {
      concurrency: options.concurrency,
      report: options.report,
      known: options.known,
      call: (run, signal, bytes) => caller.call(run, signal, { answerExpectedWithinMs: transferTimeMs(bytes) }),
    });
  }

  /** The listing; every blob it names is known to be on the server (a copy of one is committed without an upload). */
  async list(signal: AbortSignal, version?: number): Promise<Listing> {
    const listing = await this.caller.call(() => this.api.listFiles(signal, version), signal, { answerExpectedWithinMs: 0 });
    for (const file of listing.files) this.transfer.known.add(file.sha256);
    return listing;
  }

  async feed(since: number, options: { limit?: number; waitMs?: number; path?: string }, signal: AbortSignal): Promise<CommitFeed> {
    const feed = await this.caller.call(() => this.api.commitFeed(since, options, signal), signal, {
      answerExpectedWithinMs: options.waitMs ?? 0,
    });
    for (const commit of feed.commits) for (const change of commit.changes) if (change.op === "put") this.transfer.known.add(change.sha256);
    return feed;
  }

  commit(changes: Change[], source: CommitSource, key: string, signal: AbortSignal): Promise<{ version: number; chain?: string }> {
    return this.caller.call(() => this.api.commit(changes, source, key, signal), signal, { answerExpectedWithinMs: 0 });
  }
}
