import { fsyncDirQuietly } from "../util/fsync-dir.js";
import { nodeCrypto } from "../util/lazy-builtins.js";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  promises as fsp,
  readdirSync,
  rmdirSync,
  unlinkSync,
  writeSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { errorCode } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * Every file of ours under `<root>/.uspark/` (journal, state, spool, cookies) is read and written
 * here, and only here. A cloned repository may ship `.uspark` as a symlink, or
 * `.uspark/pending.json` as one, to make us write or print a file outside the project: the
 * directory must be a real directory and files are opened with O_NOFOLLOW. Writes are atomic
 * (temp file, fsync, rename, fsync of the directory); `withLock` (state-lock.ts) serialises
 * read-modify-write cycles of two processes on one root.
 *
 * The checks of `.uspark`, its making and unmaking, its `.gitignore`, the lock files and the
 * settle cookies are synchronous calls: each is one system call of a few microseconds on the
 * project's own directory, where a promise of node:fs costs some 50 µs of CPU more (a trip
 * through the thread pool, 0.2 ms and more on a busy 2-core VM), and a save or a settle makes
 * several. Whatever moves a file's content, or waits for the disk (fsync), stays asynchronous.
 */

export const STATE_DIR = ".uspark";

/** `.uspark` or one of its files is a symlink or not what it should be: refused, never followed. */
export class StateDirError extends UsparkError {
  readonly code = "state_dir";
  override readonly name = "StateDirError";
}

export function stateDirPath(root: string): string {
  return path.join(root, STATE_DIR);
}

export function stateFilePath(root: string, name: string): string {
  return path.join(root, STATE_DIR, name);
}

/** Throws a StateDirError when `.uspark` exists but is not a real directory. Returns whether it exists. */
/** Whether `.uspark` is there (false when absent); throws when something else stands in its place. */
export function checkDir(root: string): boolean {
  const dir = stateDirPath(root);
  try {
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink())
      throw new StateDirError(`${dir} is a symlink; refusing to use it (remove it, uspark recreates the directory)`);
    if (!stat.isDirectory()) throw new StateDirError(`${dir} is not a directory; refusing to use it`);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw error;
  }
}

/** Whether `.uspark` is there as a real directory (a symlink or anything else in its place: no). */
export function stateDirExists(root: string): boolean {
  try {
    return checkDir(root);
  } catch {
    return false;
  }
}

/**
 * Creates `.uspark` (a real directory, never a symlink) if needed, with its `.gitignore`; returns
 * its path. The `.gitignore` is also written into a `.uspark` found without one (made by an older
 * version): the state, the journal and a spooled transcript (which holds what the agent read, a
 * gitignored `.env` too) must never be staged by `git add -A`.
 */
export async function ensureDir(root: string): Promise<string> {
  if (!checkDir(root)) {
    try {
      mkdirSync(stateDirPath(root), { mode: 0o700 });
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
    checkDir(root);
  }
  ensureGitignore(root);
  return stateDirPath(root);
}

const GITIGNORE = ".gitignore";

/** One open in the usual case (it is there: EEXIST); whatever is in its place, a symlink too, is left alone. */
function ensureGitignore(root: string): void {
  const file = stateFilePath(root, GITIGNORE);
  try {
    writeNewFile(file, "# Written by uspark: nothing in .uspark/ belongs in git.\n*\n", 0o644);
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw refusedLink(file, error);
  }
}

/** Creates `file`, which must not exist yet (EEXIST), never through a symlink, with a few bytes in it. */
export function writeNewFile(file: string, text: string, mode: number): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    if (text !== "") writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes `.uspark` if it holds nothing but its `.gitignore` (a settle cookie made it for a
 * moment, in a tree that had none); else leaves it as it is.
 */
export async function removeDirIfUnused(root: string): Promise<void> {
  let entries: string[];
  try {
    entries = readdirSync(stateDirPath(root));
  } catch {
    return;
  }
  if (entries.some((name) => name !== GITIGNORE)) return;
  await removeStateFile(root, GITIGNORE);
  try {
    rmdirSync(stateDirPath(root));
    return;
  } catch {
    // Something was put in it meanwhile: it stays, and keeps its .gitignore.
  }
  try {
    ensureGitignore(root);
  } catch {
    // Not written back (a read-only tree): what was put in it is left as it is.
  }
}

export function refusedLink(file: string, error: unknown): unknown {
  const code = errorCode(error);
  // O_NOFOLLOW on a symlink: ELOOP on Linux, EMLINK on some BSDs.
  if (code === "ELOOP" || code === "EMLINK") return new StateDirError(`${file} is a symlink; refusing to follow it`);
  return error;
}

/** The file's text, or undefined when it (or `.uspark`) does not exist. */
export async function readStateFile(root: string, name: string): Promise<string | undefined> {
  const handle = await openStateFile(root, name, "read");
  try {
    return await handle?.readFile("utf8");
  } finally {
    await handle?.close();
  }
}

/**
 * Opens a regular file of ours, never through a symlink: to read it (undefined when it or
 * `.uspark` does not exist), or to append to it (created if need be). The caller closes it.
 */
export async function openStateFile(root: string, name: string, use: "append"): Promise<fsp.FileHandle>;
export async function openStateFile(root: string, name: string, use: "read"): Promise<fsp.FileHandle | undefined>;
export async function openStateFile(root: string, name: string, use: "read" | "append"): Promise<fsp.FileHandle | undefined> {
  if (use === "append") await ensureDir(root);
  else if (!checkDir(root)) return undefined;
  const file = stateFilePath(root, name);
  const flags = use === "append" ? constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT : constants.O_RDONLY;
  let handle: fsp.FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted in our place must not hang the open; it is refused below.
    handle = await fsp.open(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    if (use === "read" && errorCode(error) === "ENOENT") return undefined;
    throw refusedLink(file, error);
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new StateDirError(`${file} is not a regular file; refusing to use it`);
  }
  return handle;
}

/** Names of our files that start with `prefix` (regular files only). */
export async function listStateFiles(root: string, prefix: string): Promise<string[]> {
  if (!checkDir(root)) return [];
  const entries = await fsp.readdir(stateDirPath(root), { withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && entry.name.startsWith(prefix)).map((entry) => entry.name);
}

/** The stat of a regular file of ours, or undefined (a symlink in its place is never ours). */
export async function stateFileStat(root: string, name: string): Promise<Stats | undefined> {
  if (!checkDir(root)) return undefined;
  const stat = await fsp.lstat(stateFilePath(root, name)).catch(() => undefined);
  return stat?.isFile() ? stat : undefined;
}

/** Whether the file exists (a symlink in its place counts as absent: it is never ours). */
export async function stateFileExists(root: string, name: string): Promise<boolean> {
  return (await stateFileStat(root, name)) !== undefined;
}

/** Writes the whole file atomically: temp file, fsync, rename over the old one, fsync of the directory. */
export async function writeStateFile(root: string, name: string, text: string): Promise<void> {
  const dir = await ensureDir(root);
  const target = path.join(dir, name);
  const temp = `${target}.${process.pid}-${nodeCrypto().randomBytes(6).toString("hex")}.tmp`;
  const handle = await fsp.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
    await handle.close();
    // rename() replaces a symlink rather than following it; a directory in its place: EISDIR.
    await fsp.rename(temp, target).catch((error: NodeJS.ErrnoException) => {
      throw error.code === "EISDIR" ? new StateDirError(`${target} is not a regular file; refusing to replace it`) : error;
    });
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    throw error;
  }
  await fsyncDirQuietly(dir);
}

/** Creates an empty file that must not exist yet (a settle cookie): no fsync, it lives for milliseconds. */
export async function createStateFile(root: string, name: string): Promise<void> {
  const file = path.join(await ensureDir(root), name);
  try {
    writeNewFile(file, "", 0o600);
  } catch (error) {
    throw refusedLink(file, error);
  }
}

/** Removes the file if it is there (a symlink in its place is removed, never followed). */
export async function removeStateFile(root: string, name: string): Promise<void> {
  if (!checkDir(root)) return;
  unlinkIfThere(stateFilePath(root, name));
}

/**
 * unlink, not rm: fs.rm loads a module on first use that costs ~20 ms (on the exit path, or at
 * the first save), and stats the file before it unlinks it, at every lock released.
 */
export function unlinkIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

/** Renames a file of ours aside (a corrupt journal), inside `.uspark`. */
export async function moveStateFileAside(root: string, name: string, asideName: string): Promise<string> {
  checkDir(root);
  const aside = stateFilePath(root, asideName);
  await fsp.rename(stateFilePath(root, name), aside);
  return aside;
}
