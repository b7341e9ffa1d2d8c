import { createHash } from "node:crypto";
import type { Reporter } from "../report/reporter.js";
import { ApiError, type ApiClient } from "./client.js";

/** The blob requests the transfer layer makes (the client's; the simulation's server in memory). */
export type BlobApi = Pick<ApiClient, "hasBlob" | "putBlob" | "postBlobs" | "getBlobs" | "getBlob">;
import { MAX_BATCH_BYTES, MAX_BATCH_PARTS } from "../api/validate.js";
import { mapLimit } from "../util/map-limit.js";

/**
 * The transfer layer: blobs up and down, whatever the server's API version. v1.1 servers get
 * packs (POST /blobs, POST /blobs/get: up to 1000 parts, and PACK_BYTES, a request); a 404 or
 * 405 on those routes means a v1 server, and the rest of the session uses one request per blob
 * (HEAD/PUT/GET /blobs/{sha}), after one notice. Callers never issue blob requests themselves.
 */

/** A blob to upload: its bytes kept from hashing, or `load()` to read them again (undefined: changed). */
export interface UploadItem {
  sha256: string;
  size: number;
  bytes?: Uint8Array;
  load(): Promise<Uint8Array | undefined>;
}

export type UploadOutcome = "ok" | "changed" | "too-large" | { reason: string };

export interface BlobRef {
  sha256: string;
  size: number;
}

export interface TransferOptions {
  concurrency: number;
  report: Reporter;
  /** Runs one request that moves `bytes` (sent or received) under the session's retry policy. */
  call: <T>(run: () => Promise<T>, signal: AbortSignal, bytes: number) => Promise<T>;
  /** Hashes the server is known to have; shared with the caller, grown by every answer. */
  known?: Set<string>;
  /** Bytes per pack (default 16 MiB: with `concurrency` packs in flight, what memory holds). */
  packBytes?: number;
}

const PACK_BYTES = 16 * 1024 * 1024;
const DELIVER_CONCURRENCY = 8;
/** Larger blobs are asked about (HEAD) before they are sent: cheaper than sending them twice. */
const HEAD_FIRST_ABOVE = 1024 * 1024;

/** Groups blobs into packs of at most `maxParts` parts and `maxBytes` bytes (a larger blob goes alone). */
export function packBlobs<T extends { size: number }>(items: readonly T[], maxBytes: number, maxParts = MAX_BATCH_PARTS): T[][] {
  const packs: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length >= maxParts || bytes + item.size > maxBytes)) {
      packs.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.size;
  }
  if (current.length > 0) packs.push(current);
  return packs;
}

function sumBytes(blobs: readonly { bytes: Uint8Array }[]): number {
  return blobs.reduce((sum, blob) => sum + blob.bytes.length, 0);
}

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export class Transfer {
  readonly known: Set<string>;
  /** v1.1 routes still worth trying (false after a 404/405). */
  private packs = true;
  private readonly packBytes: number;

  constructor(
    private readonly client: BlobApi,
    private readonly options: TransferOptions,
  ) {
    this.known = options.known ?? new Set();
    this.packBytes = Math.min(options.packBytes ?? PACK_BYTES, MAX_BATCH_BYTES);
  }

  /** The API version this session speaks for blobs. */
  get apiVersion(): "v1.1" | "v1" {
    return this.packs ? "v1.1" : "v1";
  }

  /**
   * Makes sure the server has every blob (all of them with `force`, else those not known to be
   * there). Resolves to each hash's outcome; throws a fatal ApiError or the signal's reason.
   */
  async uploadBlobs(
    items: readonly UploadItem[],
    signal: AbortSignal,
    options: { force?: boolean; onSent?: (items: readonly UploadItem[]) => void } = {},
  ): Promise<Map<string, UploadOutcome>> {
    const outcomes = new Map<string, UploadOutcome>();
    const unique = [...new Map(items.map((item) => [item.sha256, item])).values()];
    let todo = unique;
    if (!options.force) {
      // The one check against the blobs known to be there (the engine shares its set).
      for (const item of unique) if (this.known.has(item.sha256)) outcomes.set(item.sha256, "ok");
      todo = await this.dropPresentLarge(
        unique.filter((item) => !outcomes.has(item.sha256)),
        signal,
        outcomes,
      );
    }
    if (this.packs) {
      const leftover: UploadItem[] = [];
      await mapLimit(packBlobs(todo, this.packBytes), this.options.concurrency, async (pack) => {
        const left = await this.sendPack(pack, signal, outcomes);
        leftover.push(...left);
        const unsent = new Set(left.map((item) => item.sha256));
        options.onSent?.(pack.filter((item) => !unsent.has(item.sha256)));
      });
      todo = leftover;
    }
    await mapLimit(todo, this.options.concurrency, async (item) => {
      outcomes.set(item.sha256, await this.putOne(item, signal));
      options.onSent?.([item]);
    });
    return outcomes;
  }

  /**
   * Downloads the blobs, checks each one's sha256 and hands it to `onBlob` (once per hash).
   * Resolves to the hashes that could not be had, with the reason.
   */
  async downloadBlobs(
    blobs: readonly BlobRef[],
    onBlob: (sha256: string, bytes: Uint8Array) => Promise<void>,
    signal: AbortSignal,
  ): Promise<Map<string, string>> {
    const failed = new Map<string, string>();
    const unique = [...new Map(blobs.map((blob) => [blob.sha256, blob])).values()];
    const deliver = async (sha: string, bytes: Uint8Array | undefined) => {
      if (!bytes) failed.set(sha, "the server did not send it");
      else if (sha256Of(bytes) !== sha) failed.set(sha, "the server sent bytes with another sha256");
      else await onBlob(sha, bytes);
    };
    let singles = unique.filter((blob) => blob.size > this.packBytes);
    if (this.packs) {
      const packable = unique.filter((blob) => blob.size <= this.packBytes);
      await mapLimit(packBlobs(packable, this.packBytes), this.options.concurrency, async (pack) => {
        singles.push(...(await this.getPack(pack, signal, deliver, failed)));
      });
    } else {
      singles = unique;
    }
    await mapLimit(singles, this.options.concurrency, async (blob) => {
      try {
        await deliver(blob.sha256, await this.options.call(() => this.client.getBlob(blob.sha256, blob.size, signal), signal, blob.size));
      } catch (error) {
        failed.set(blob.sha256, this.nonFatal(error, signal, "download failed"));
      }
    });
    return failed;
  }

  /** Sends one pack; returns what is left for v1 requests (all of it when the server is v1). */
  private async sendPack(pack: UploadItem[], signal: AbortSignal, outcomes: Map<string, UploadOutcome>): Promise<UploadItem[]> {
    const loaded: { item: UploadItem; bytes: Uint8Array }[] = [];
    for (const item of pack) {
      const bytes = item.bytes ?? (await item.load());
      if (bytes) loaded.push({ item, bytes });
      else outcomes.set(item.sha256, "changed");
    }
    let sending = loaded;
    while (sending.length > 0) {
      if (!this.packs) return sending.map((s) => s.item);
      const blobs = sending.map(({ item, bytes }) => ({ sha256: item.sha256, bytes }));
      try {
        const answer = await this.options.call(() => this.client.postBlobs(blobs, signal), signal, sumBytes(blobs));
        const confirmed = new Set([...answer.stored, ...answer.present]);
        for (const { sha256 } of blobs) {
          if (confirmed.has(sha256)) this.known.add(sha256);
          outcomes.set(sha256, confirmed.has(sha256) ? "ok" : { reason: "upload failed: the server did not confirm it" });
        }
        return [];
      } catch (error) {
        if (this.isUnsupported(error)) continue;
        const bad = error instanceof ApiError && error.code === "hash_mismatch" ? error.body?.sha256 : undefined;
        if (typeof bad === "string" && sending.some((s) => s.item.sha256 === bad)) {
          outcomes.set(bad, "changed");
          sending = sending.filter((s) => s.item.sha256 !== bad);
          continue;
        }
        if (error instanceof ApiError && error.status === 413 && sending.length > 1) {
          const half = Math.ceil(sending.length / 2);
          const halves = [sending.slice(0, half), sending.slice(half)].map((part) => part.map(({ item, bytes }) => ({ ...item, bytes })));
          const left = [...(await this.sendPack(halves[0]!, signal, outcomes)), ...(await this.sendPack(halves[1]!, signal, outcomes))];
          return left;
        }
        const outcome = this.uploadFailure(error, signal);
        for (const { item } of sending) outcomes.set(item.sha256, outcome);
        return [];
      }
    }
    return [];
  }

  /** Asks for one pack; returns the blobs left for single requests. */
  private async getPack(
    pack: BlobRef[],
    signal: AbortSignal,
    deliver: (sha: string, bytes: Uint8Array | undefined) => Promise<void>,
    failed: Map<string, string>,
  ): Promise<BlobRef[]> {
    let asking = pack;
    while (asking.length > 0) {
      if (!this.packs) return asking;
      const hashes = asking.map((blob) => blob.sha256);
      const bytes = asking.reduce((sum, blob) => sum + blob.size, 0);
      try {
        const got = await this.options.call(() => this.client.getBlobs(hashes, bytes, signal), signal, bytes);
        // Handed on several at a time: the receiver's writes (fsync) overlap.
        await mapLimit(hashes, DELIVER_CONCURRENCY, (sha) => deliver(sha, got.get(sha)));
        return [];
      } catch (error) {
        if (this.isUnsupported(error)) continue;
        const missing =
          error instanceof ApiError && error.status === 404 && Array.isArray(error.body?.missing) ? new Set(error.body.missing) : undefined;
        if (missing && asking.some((blob) => missing.has(blob.sha256))) {
          for (const blob of asking) if (missing.has(blob.sha256)) failed.set(blob.sha256, "the server does not have it");
          asking = asking.filter((blob) => !missing.has(blob.sha256));
          continue;
        }
        if (error instanceof ApiError && error.status === 413) {
          if (asking.length === 1) return asking;
          const half = Math.ceil(asking.length / 2);
          return [
            ...(await this.getPack(asking.slice(0, half), signal, deliver, failed)),
            ...(await this.getPack(asking.slice(half), signal, deliver, failed)),
          ];
        }
        const reason = this.nonFatal(error, signal, "download failed");
        for (const sha of hashes) failed.set(sha, reason);
        return [];
      }
    }
    return [];
  }

  /** v1: PUT /blobs/{sha}. */
  private async putOne(item: UploadItem, signal: AbortSignal): Promise<UploadOutcome> {
    const bytes = item.bytes ?? (await item.load());
    if (!bytes) return "changed";
    try {
      await this.options.call(() => this.client.putBlob(item.sha256, bytes, signal), signal, bytes.length);
      this.known.add(item.sha256);
      return "ok";
    } catch (error) {
      return this.uploadFailure(error, signal);
    }
  }

  /** Large blobs the server already has (HEAD) need not be sent; the others are returned. */
  private async dropPresentLarge(items: UploadItem[], signal: AbortSignal, outcomes: Map<string, UploadOutcome>): Promise<UploadItem[]> {
    const large = items.filter((item) => item.size > HEAD_FIRST_ABOVE);
    if (large.length === 0) return items;
    await mapLimit(large, this.options.concurrency, async (item) => {
      if (await this.options.call(() => this.client.hasBlob(item.sha256, signal), signal, 0)) {
        this.known.add(item.sha256);
        outcomes.set(item.sha256, "ok");
      }
    });
    return items.filter((item) => !outcomes.has(item.sha256));
  }

  /** A 404/405 on a v1.1 route: from now on, v1 requests, said once. */
  private isUnsupported(error: unknown): boolean {
    if (!(error instanceof ApiError) || error.code !== "unsupported") return false;
    if (this.packs) {
      this.packs = false;
      this.options.report.info("api-v1", "the server speaks API v1 (no POST /blobs): blobs go one request each for this session", {
        status: error.status,
      });
    }
    return true;
  }

  private uploadFailure(error: unknown, signal: AbortSignal): UploadOutcome {
    if (error instanceof ApiError && !error.fatal && !signal.aborted) {
      if (error.code === "hash_mismatch") return "changed";
      if (error.status === 413) return "too-large";
    }
    return { reason: this.nonFatal(error, signal, "upload failed") };
  }

  /** The reason of a non-fatal error; a fatal one (or an abort) is thrown on. */
  private nonFatal(error: unknown, signal: AbortSignal, what: string): string {
    if (!(error instanceof ApiError) || error.fatal || signal.aborted) throw error;
    return `${what}: ${error.message}`;
  }
}
