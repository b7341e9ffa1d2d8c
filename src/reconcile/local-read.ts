import { createHash } from "node:crypto";
import { constants, promises as fsp, type Stats } from "node:fs";
import path from "node:path";
import { isInside } from "../paths.js";

/**
 * Reading a local file for upload, safely: the file is opened without following a final symlink
 * (O_NOFOLLOW) and without blocking on a FIFO (O_NONBLOCK); the open descriptor must be a
 * regular file whose real path (as the kernel sees it, /proc/self/fd/N) is still the path the
 * policy approved, so a directory swapped for a symlink between the policy check and the read
 * cannot smuggle a file from outside the root. Everything is read from that descriptor.
 */

export interface FileSnapshot {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

export type LocalRead =
  | { kind: "file"; sha256: string; size: number; stat: FileSnapshot; /** kept when small enough */ bytes?: Buffer }
  /** No regular file at that path any more (gone, or a directory now): a delete. */
  | { kind: "missing" }
  /** Never read, by policy: a symlink, a FIFO/device, or a path that now resolves elsewhere. */
  | { kind: "refused"; reason: string }
  | { kind: "too-large"; size: number }
  /** It changed while it was being read; try again later. */
  | { kind: "changed" }
  /** Could not be read (permissions, I/O error). */
  | { kind: "error"; reason: string };

export interface ReadOptions {
  /** The real path of the project root. */
  root: string;
  maxFileSize: number;
  /** Keep the bytes in memory when the file is at most this large (default 0: never). */
  keepBytesUpTo?: number;
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const CHUNK = 1024 * 1024;
let procFdWorks: boolean | undefined;

export async function readLocal(abs: string, options: ReadOptions): Promise<LocalRead> {
  if (!isInside(options.root, abs)) return { kind: "refused", reason: `outside the project root ${options.root}` };
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(abs, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    return openFailure(error, abs);
  }
  try {
    const before = await handle.stat();
    if (before.isDirectory()) return { kind: "missing" };
    if (!before.isFile()) return { kind: "refused", reason: "not a regular file" };
    if (before.size > options.maxFileSize) return { kind: "too-large", size: before.size };

    const where = await descriptorPath(handle, abs, before);
    if (where === undefined) return { kind: "changed" };
    if (where !== abs) {
      return isInside(options.root, where)
        ? { kind: "refused", reason: `it now resolves to ${where}` }
        : { kind: "refused", reason: `it now resolves to ${where}, outside the project root` };
    }

    // A file kept whole is read straight into the buffer that keeps it, one byte longer than the
    // stat said (to see growth): no copy. Any other goes through one buffer of at most 1 MiB.
    const keep = before.size <= (options.keepBytesUpTo ?? 0);
    const buffer = Buffer.allocUnsafe(keep ? before.size + 1 : Math.min(CHUNK, Math.max(before.size, 1) + 1));
    const hash = createHash("sha256");
    let size = 0;
    for (;;) {
      const at = keep ? size : 0;
      const wanted = buffer.length - at;
      const { bytesRead } = await handle.read(buffer, at, wanted, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > options.maxFileSize) return { kind: "too-large", size };
      hash.update(buffer.subarray(at, at + bytesRead));
      // All the size said, and a short read: the end, without one more read to be told so (the
      // stat after still catches growth). A short read before that size reads on (FUSE, NFS).
      if ((size === before.size && bytesRead < wanted) || (keep && size === buffer.length)) break;
    }
    const after = await handle.stat();
    if (size !== before.size || !sameStat(before, after)) return { kind: "changed" };
    const result: LocalRead = { kind: "file", sha256: hash.digest("hex"), size, stat: snapshot(after) };
    if (keep) result.bytes = buffer.subarray(0, size);
    return result;
  } catch (error) {
    return { kind: "error", reason: describe(error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function sameStat(a: FileSnapshot, b: FileSnapshot): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

function snapshot(stat: Stats): FileSnapshot {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
}

/**
 * The real path of the open file: /proc/self/fd/N on Linux; elsewhere the realpath of `abs`.
 * Either is accepted only when the file at that path is the inode of the descriptor (same dev
 * and ino): undefined when the file was removed or replaced after it was opened. (The kernel
 * marks a removed file's link with " (deleted)", but a file may really be named so: the inode
 * decides, never the text.) `opened`: the descriptor's stat when the caller has it (an open
 * file's inode never changes), one system call fewer.
 */
export async function descriptorPath(handle: fsp.FileHandle, abs: string, opened?: Stats): Promise<string | undefined> {
  let where: string | undefined;
  if (procFdWorks !== false) {
    try {
      where = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
      procFdWorks = true;
    } catch {
      if (procFdWorks === true) return undefined;
      procFdWorks = false;
    }
  }
  try {
    where ??= path.resolve(await fsp.realpath(abs));
    const [byPath, byFd] = await Promise.all([fsp.lstat(where), opened ?? handle.stat()]);
    return byPath.ino === byFd.ino && byPath.dev === byFd.dev ? where : undefined;
  } catch {
    return undefined;
  }
}

function openFailure(error: unknown, abs: string): LocalRead {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return { kind: "missing" };
    case "ELOOP":
    case "EMLINK": // FreeBSD's answer to O_NOFOLLOW on a symlink
      return { kind: "refused", reason: "it is a symlink (symlinks are not followed)" };
    case "EISDIR":
      return { kind: "missing" };
    case "ENXIO": // a socket, or a FIFO without a writer
      return { kind: "refused", reason: "not a regular file" };
    default:
      return { kind: "error", reason: `cannot read ${abs}: ${describe(error)}` };
  }
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e?.code ? `${e.code}` : error instanceof Error ? error.message : String(error);
}
