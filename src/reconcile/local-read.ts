import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fstat,
  fstatSync,
  lstatSync,
  openSync,
  promises as fsp,
  read,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { isInside } from "../paths/paths.js";
import { localStatOf, sameStat, type LocalStat } from "./base-keeper.js";
import { errorCode, errorText } from "../errors/text.js";

/**
 * Reading a local file for upload, safely: the file is opened without following a final symlink
 * (O_NOFOLLOW) and without blocking on a FIFO (O_NONBLOCK); the open descriptor must be a
 * regular file whose real path (as the kernel sees it, /proc/self/fd/N) is still the path the
 * policy approved, so a directory swapped for a symlink between the policy check and the read
 * cannot smuggle a file from outside the root. Everything is read from that descriptor.
 */

/** The stat the base keeps (base-keeper.ts), all of it known. */
export type FileSnapshot = Required<LocalStat>;

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

/** The calls a read makes once the file is open. */
export interface DescriptorCalls {
  fstat(fd: number): Promise<Stats>;
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  readlink(link: string): Promise<string>;
  lstat(file: string): Promise<Stats>;
  realpath(file: string): Promise<string>;
}

/**
 * Through the thread pool. A round trip there costs more than the call itself on a small VM
 * (about 0.2 ms against a few microseconds), and a read makes six or seven: 40 small files took
 * 6.6 to 16.7 ms this way against 1.3 to 2.6 ms with `IN_PLACE`.
 */
const THROUGH_POOL: DescriptorCalls = {
  fstat: (fd) => new Promise((resolve, reject) => fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats)))),
  read: (fd, buffer, offset, length, position) =>
    new Promise((resolve, reject) =>
      read(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
    ),
  readlink: (link) => fsp.readlink(link),
  lstat: (file) => fsp.lstat(file),
  realpath: (file) => fsp.realpath(file),
};

/** On the calling thread: for a file small enough that reading it keeps the event loop no longer than a round trip would. */
const IN_PLACE: DescriptorCalls = {
  fstat: async (fd) => fstatSync(fd),
  read: async (fd, buffer, offset, length, position) => readSync(fd, buffer, offset, length, position),
  readlink: async (link) => readlinkSync(link),
  lstat: async (file) => lstatSync(file),
  realpath: async (file) => realpathSync(file),
};

/** The largest file read in place (one read of it is microseconds from the page cache). */
const IN_PLACE_BYTES = 64 * 1024;

export async function readLocal(abs: string, options: ReadOptions): Promise<LocalRead> {
  if (!isInside(options.root, abs)) return { kind: "refused", reason: `outside the project root ${options.root}` };
  let fd: number;
  try {
    // Opened in place: O_NONBLOCK keeps a FIFO from waiting for a writer.
    fd = openSync(abs, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    return openFailure(error, abs);
  }
  try {
    const before = fstatSync(fd);
    if (before.isDirectory()) return { kind: "missing" };
    if (!before.isFile()) return { kind: "refused", reason: "not a regular file" };
    if (before.size > options.maxFileSize) return { kind: "too-large", size: before.size };
    const calls = before.size <= IN_PLACE_BYTES ? IN_PLACE : THROUGH_POOL;

    const where = await descriptorPath(fd, abs, before, calls);
    if (where === undefined) return { kind: "changed" };
    if (where !== abs) {
      return isInside(options.root, where)
        ? { kind: "refused", reason: `it now resolves to ${where}` }
        : { kind: "refused", reason: `it now resolves to ${where}, outside the project root` };
    }
    return await readOpen(fd, before, options, calls);
  } catch (error) {
    return { kind: "error", reason: describe(error) };
  } finally {
    closeQuietly(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Nothing was written through it: a failed close loses nothing.
  }
}

/** Hashes (and keeps, when small enough) what the open file holds, and checks it did not change meanwhile. */
async function readOpen(fd: number, before: Stats, options: ReadOptions, calls: DescriptorCalls): Promise<LocalRead> {
  // A file kept whole is read straight into the buffer that keeps it, one byte longer than the
  // stat said (to see growth): no copy. Any other goes through one buffer of at most 1 MiB.
  const keep = before.size <= (options.keepBytesUpTo ?? 0);
  const buffer = Buffer.allocUnsafe(keep ? before.size + 1 : Math.min(CHUNK, Math.max(before.size, 1) + 1));
  const hash = createHash("sha256");
  let size = 0;
  for (;;) {
    const at = keep ? size : 0;
    const wanted = buffer.length - at;
    const bytesRead = await calls.read(fd, buffer, at, wanted, size);
    if (bytesRead === 0) break;
    size += bytesRead;
    if (size > options.maxFileSize) return { kind: "too-large", size };
    hash.update(buffer.subarray(at, at + bytesRead));
    // All the size said, and a short read: the end, without one more read to be told so (the
    // stat after still catches growth). A short read before that size reads on (FUSE, NFS).
    if ((size === before.size && bytesRead < wanted) || (keep && size === buffer.length)) break;
  }
  const after = await calls.fstat(fd);
  if (size !== before.size || !sameStat(before, after)) return { kind: "changed" };
  const result: LocalRead = { kind: "file", sha256: hash.digest("hex"), size, stat: snapshot(after) };
  if (keep) result.bytes = buffer.subarray(0, size);
  return result;
}

function snapshot(stat: Stats): FileSnapshot {
  return localStatOf(stat) as FileSnapshot;
}

/**
 * The real path of the open file: /proc/self/fd/N on Linux; elsewhere the realpath of `abs`.
 * Either is accepted only when the file at that path is the inode of the descriptor (same dev
 * and ino): undefined when the file was removed or replaced after it was opened. (The kernel
 * marks a removed file's link with " (deleted)", but a file may really be named so: the inode
 * decides, never the text.) `opened`: the descriptor's stat when the caller has it (an open
 * file's inode never changes), one system call fewer.
 */
export async function descriptorPath(
  fd: number,
  abs: string,
  opened?: Stats,
  calls: DescriptorCalls = THROUGH_POOL,
): Promise<string | undefined> {
  let where: string | undefined;
  if (procFdWorks !== false) {
    try {
      where = await calls.readlink(`/proc/self/fd/${fd}`);
      procFdWorks = true;
    } catch {
      if (procFdWorks === true) return undefined;
      procFdWorks = false;
    }
  }
  try {
    where ??= path.resolve(await calls.realpath(abs));
    const [byPath, byFd] = await Promise.all([calls.lstat(where), opened ?? calls.fstat(fd)]);
    return byPath.ino === byFd.ino && byPath.dev === byFd.dev ? where : undefined;
  } catch {
    return undefined;
  }
}

function openFailure(error: unknown, abs: string): LocalRead {
  const code = errorCode(error);
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
  return errorCode(error) || errorText(error);
}
