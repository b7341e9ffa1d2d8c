import type { Change, CommitFeed, CommitSource, Listing } from "../../../src/api/types.js";
import { ApiError } from "../../../src/transfer/api-error.js";
import type { ProjectApi } from "../../../src/transfer/project-remote.js";
import { plainCopy } from "./plain-data.js";
import type { MemoryServer } from "./memory-server.js";
import type { Random } from "./random.js";
import type { Scheduler } from "./scheduler.js";

/**
 * One writer's connection to the server: each request travels (a step of the scheduler), is
 * handled by the server at once, and its answer travels back (another step), so answers of
 * concurrent requests come back in any order. With faults on, a request is lost on the way
 * (never applied), its answer is lost (applied, the client sees a network error and retries with
 * the same Idempotency-Key), or it arrives twice (the server handles it twice, as a retransmit).
 */

export interface Faults {
  lostRequest: number;
  lostAnswer: number;
  twice: number;
}

export const NO_FAULTS: Faults = { lostRequest: 0, lostAnswer: 0, twice: 0 };

export interface Acknowledged {
  writer: string;
  version: number;
  changes: Change[];
}

export function simulatedApi(options: {
  owner: string;
  writer: string;
  server: MemoryServer;
  scheduler: Scheduler;
  random: Random;
  faults: () => Faults;
  acknowledged: Acknowledged[];
}): ProjectApi {
  const { owner, server, scheduler, random } = options;
  async function call<T>(label: string, handle: () => T): Promise<T> {
    await scheduler.gate(owner, label);
    const faults = options.faults();
    if (random.chance(faults.lostRequest)) {
      scheduler.log(() => `${owner} ${label}: request lost`);
      throw new ApiError(`${label}: network error (simulated: request lost)`, { code: "network", retryable: true });
    }
    let outcome: { value: T } | { error: unknown };
    const once = (): typeof outcome => {
      try {
        return { value: handle() };
      } catch (error) {
        return { error };
      }
    };
    outcome = once();
    if (random.chance(faults.twice)) outcome = once();
    await scheduler.gate(owner, `${label} answer`);
    if (random.chance(options.faults().lostAnswer)) {
      scheduler.log(() => `${owner} ${label}: answer lost`);
      throw new ApiError(`${label}: network error (simulated: answer lost)`, { code: "network", retryable: true });
    }
    if ("error" in outcome) throw outcome.error;
    return outcome.value;
  }

  return {
    listFiles: (_signal?: AbortSignal, version?: number): Promise<Listing> => call("GET /files", () => server.listFiles(version)),
    commitFeed: (since: number, feed: { limit?: number; waitMs?: number; path?: string } = {}): Promise<CommitFeed> =>
      call(`GET /commits?since=${since}`, () => server.commitFeed(since, feed)),
    commit: async (changes: Change[], source: CommitSource, key: string) => {
      const sent = plainCopy(changes);
      const answer = await call("POST /commits", () => {
        try {
          const result = server.commit(changes, source, key);
          server.committers.set(result.version, options.writer);
          scheduler.log(() => `${owner} commit v${result.version}: ${describeChanges(sent)}`);
          return result;
        } catch (error) {
          scheduler.log(
            () =>
              `${owner} commit refused (${(error as ApiError).code} ${JSON.stringify((error as ApiError).body?.conflicts ?? "")}): ${describeChanges(sent)}`,
          );
          throw error;
        }
      });
      options.acknowledged.push({ writer: options.writer, version: answer.version, changes: sent });
      return answer;
    },
    hasBlob: (sha: string) => call("HEAD /blobs", () => server.blobs.has(sha)),
    putBlob: (sha: string, bytes: Uint8Array) => call("PUT /blobs", () => server.putBlob(sha, bytes)),
    postBlobs: (blobs: readonly { sha256: string; bytes: Uint8Array }[]) =>
      call("POST /blobs", () => {
        const stored: string[] = [];
        const present: string[] = [];
        for (const blob of blobs) (server.putBlob(blob.sha256, blob.bytes) === "created" ? stored : present).push(blob.sha256);
        return { stored, present };
      }),
    getBlobs: (hashes: readonly string[]) =>
      call("POST /blobs/get", () => {
        const missing = hashes.filter((sha) => !server.blobs.has(sha));
        if (missing.length > 0)
          throw new ApiError("POST /blobs/get: 404 not_found", { status: 404, code: "not_found", body: { error: "not_found", missing } });
        return new Map(hashes.map((sha) => [sha, server.getBlob(sha)]));
      }),
    getBlob: (sha: string) => call("GET /blobs", () => server.getBlob(sha)),
  };
}

export function describeChanges(changes: readonly Change[]): string {
  return changes
    .map(
      (c) =>
        `${c.op} ${c.path}${c.op === "put" ? `=${c.sha256.slice(0, 6)}` : ""} (expect ${c.expect === undefined ? "-" : c.expect === null ? "absent" : c.expect.slice(0, 6)})`,
    )
    .join(", ");
}
