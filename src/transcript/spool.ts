import type { FileHandle } from "node:fs/promises";
import type { Reporter } from "../report/reporter.js";
import { listStateFiles, openStateFile, readStateFile, removeStateFile, writeStateFile } from "../state/state-dir.js";
import { errorText } from "../errors/text.js";

/**
 * A transcript's spool under `.uspark/`: `transcript-<sessionId>.ndjson` holds the stream's
 * bytes from offset `base` on; `transcript-<sessionId>.json` says where they go and how much of
 * them the server has acknowledged. All through state-dir (no symlinks followed).
 */

export interface SpoolMeta {
  apiUrl: string;
  projectId: string;
  sessionId: string;
  /** The stream offset of the spool file's first byte. */
  base: number;
  /** Bytes the server has acknowledged (>= base). */
  acked: number;
  /** The uspark process still writing this spool, while it runs. */
  pid?: number;
}

const PREFIX = "transcript-";
/** Our session ids are UUIDs; anything else in a file name is not ours to open. */
const SESSION_ID = /^[A-Za-z0-9-]{1,100}$/;

export function spoolDataName(sessionId: string): string {
  return `${PREFIX}${sessionId}.ndjson`;
}

function metaName(sessionId: string): string {
  return `${PREFIX}${sessionId}.json`;
}

export function writeSpoolMeta(root: string, meta: SpoolMeta): Promise<void> {
  return writeStateFile(root, metaName(meta.sessionId), JSON.stringify({ version: 1, ...meta }) + "\n");
}

export async function removeSpool(root: string, sessionId: string): Promise<void> {
  await removeStateFile(root, metaName(sessionId));
  await removeStateFile(root, spoolDataName(sessionId));
}

export function openSpoolForAppend(root: string, sessionId: string): Promise<FileHandle> {
  return openStateFile(root, spoolDataName(sessionId), "append");
}

/** The spools left by earlier runs (unreadable ones are reported and skipped). */
export async function readSpools(root: string, report: Reporter): Promise<SpoolMeta[]> {
  const metas: SpoolMeta[] = [];
  for (const name of await listStateFiles(root, PREFIX)) {
    const sessionId = name.slice(PREFIX.length, -".json".length);
    if (!name.endsWith(".json") || !SESSION_ID.test(sessionId)) continue;
    try {
      const meta = parseMeta(await readStateFile(root, name));
      if (meta && meta.sessionId === sessionId) metas.push(meta);
      else report.warn("transcript", `.uspark/${name} is not a transcript spool's description; left alone`);
    } catch (error) {
      report.warn("transcript", `cannot read .uspark/${name}: ${errorText(error)}`);
    }
  }
  return metas;
}

function parseMeta(text: string | undefined): SpoolMeta | undefined {
  let json: Partial<SpoolMeta> | null;
  try {
    json = JSON.parse(text ?? "null") as Partial<SpoolMeta> | null;
  } catch {
    return undefined;
  }
  if (!json || typeof json.apiUrl !== "string" || typeof json.projectId !== "string" || typeof json.sessionId !== "string")
    return undefined;
  if (!isOffset(json.base) || !isOffset(json.acked) || json.acked < json.base) return undefined;
  const pid = Number.isSafeInteger(json.pid) ? json.pid : undefined;
  return { apiUrl: json.apiUrl, projectId: json.projectId, sessionId: json.sessionId, base: json.base, acked: json.acked, pid };
}

function isOffset(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Reads a spool file: its length, and ranges of it by stream offset. */
export class SpoolReader {
  private constructor(
    private readonly handle: FileHandle,
    readonly base: number,
    /** The stream offset after the file's last byte (a live session moves it as it appends). */
    public end: number,
  ) {}

  static async open(root: string, sessionId: string, base: number): Promise<SpoolReader | undefined> {
    const handle = await openStateFile(root, spoolDataName(sessionId), "read");
    if (!handle) return undefined;
    return new SpoolReader(handle, base, base + (await handle.stat()).size);
  }

  /** Up to `max` bytes from offset `from`: into `into` when given (reused: see ByteQueue.read). */
  async read(from: number, max: number, into?: Buffer): Promise<Buffer> {
    const length = Math.min(max, this.end - from, into?.length ?? Infinity);
    const bytes = into === undefined ? Buffer.allocUnsafe(length) : into.subarray(0, length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.handle.read(bytes, done, length - done, from - this.base + done);
      if (bytesRead === 0) throw new Error(`the spool file ended early at ${from + done}`);
      done += bytesRead;
    }
    return bytes;
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}
