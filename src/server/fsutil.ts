// Small durable-write helpers of the file store.

import { createReadStream, type Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import type { StoredBytes } from "./store.js";
import { errorCode } from "../errors/text.js";

export async function writeAll(file: FileHandle, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length;) {
    const { bytesWritten } = await file.write(data, offset);
    offset += bytesWritten;
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return; // directories cannot be opened for fsync there
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A file's stat, or undefined when it does not exist. */
export async function fileStat(file: string): Promise<Stats | undefined> {
  try {
    return await stat(file);
  } catch (error) {
    if (isCode(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** A file's size, or undefined when it does not exist. */
export async function fileSize(file: string): Promise<number | undefined> {
  return (await fileStat(file))?.size;
}

/** The first `size` bytes of a file (from any offset), read as they are consumed (the file may grow meanwhile). */
export function fileBytes(file: string, size: number): StoredBytes {
  return fileBytesAt(file, 0, size);
}

/** The `size` bytes of a file from byte `start` (a blob in a pack), read as they are consumed. */
export function fileBytesAt(file: string, start: number, size: number): StoredBytes {
  // An inclusive end cannot say "no byte": an empty file is an empty stream.
  return {
    size,
    chunks: (from = 0) => (from >= size ? Readable.from([]) : createReadStream(file, { start: start + from, end: start + size - 1 })),
  };
}

export function isCode(error: unknown, ...codes: string[]): boolean {
  return codes.includes(errorCode(error) ?? "");
}

/** Writes a new file (never an existing one) and fsyncs it; its directory entry is the caller's to fsync. */
export async function writeFileDurably(file: string, text: string): Promise<void> {
  const handle = await open(file, "wx");
  try {
    await writeAll(handle, Buffer.from(text));
    await handle.sync();
  } finally {
    await handle.close();
  }
}
