import { randomBytes } from "node:crypto";
import { constants, promises as fsp, type Stats } from "node:fs";
import path from "node:path";
import { isInside } from "../paths/paths.js";
import { fsyncDirQuietly } from "../util/fsync-dir.js";
import { LocalChanged, WriteRefused } from "./local-tree.js";
import { errorCode } from "../errors/text.js";

/**
 * Writing a pulled file without ever leaving the root: directories are created one by one, each
 * checked with lstat (a symlink is never followed); the bytes go to a temp file of ours, opened
 * with O_EXCL|O_NOFOLLOW and fsynced, and are renamed into place once the directory they go to is
 * checked, right before, to be inside the root by its real path. The temp file lives under `.uspark/tmp` (`tempDir`), where
 * no scan looks, so that one a killed pull leaves is never taken for the user's file; it is
 * removed at the next start (removeOwnTemps). Where the rename cannot cross (a mount point under
 * the root: EXDEV), the temp file is made beside its target instead, under a name the ignore
 * engine always excludes (engine.ts isOwnTempName). The caller fsyncs the directories once all is written
 * (syncDirectories), before it records the pull as done.
 */

const { O_WRONLY, O_CREAT, O_EXCL } = constants;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Does the local file still hold what was planned on? Asked right before the rename or unlink. */
export type Precondition = () => Promise<boolean>;

/** Writes `bytes` at `abs` (under `root`) if `unchanged()` still holds right before the rename; the temp file goes in `tempDir` (default: beside `abs`). */
export async function writeAtomic(root: string, abs: string, bytes: Uint8Array, unchanged: Precondition, tempDir?: string): Promise<void> {
  const problem = await parentProblem(root, abs, true);
  if (problem) throw new WriteRefused(problem);
  const existing = await fsp.lstat(abs).catch(() => undefined);
  if (existing && !existing.isFile())
    throw new WriteRefused(
      existing.isDirectory() ? "a directory is in its place here" : "something other than a regular file is in its place here",
    );
  const mode = existing?.isFile() ? existing.mode & 0o7777 : undefined;
  const crossed =
    tempDir !== undefined && (await writeThrough(root, abs, bytes, unchanged, path.join(tempDir, `${process.pid}-${hex()}.tmp`), mode));
  if (tempDir === undefined || crossed === "other-device") {
    await writeThrough(
      root,
      abs,
      bytes,
      unchanged,
      path.join(path.dirname(abs), `.${path.basename(abs).slice(0, 200)}.uspark-${hex()}.tmp`),
      mode,
    );
  }
}

function hex(): string {
  return randomBytes(6).toString("hex");
}

/** The write through one temp file; "other-device" when the rename cannot reach `abs` from there (nothing written). */
async function writeThrough(
  root: string,
  abs: string,
  bytes: Uint8Array,
  unchanged: Precondition,
  temp: string,
  mode: number | undefined,
): Promise<true | "other-device"> {
  const handle = await fsp.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
  let renamed = false;
  try {
    if (mode !== undefined) await handle.chmod(mode);
    await handle.writeFile(bytes);
    await handle.sync();
    await handle.close();
    // The real path of the directory it goes to, as late as can be: a directory swapped for a symlink is seen here.
    const dir = await fsp.realpath(path.dirname(abs)).catch(() => undefined);
    if (dir === undefined || !isInside(root, dir))
      throw new WriteRefused(`it would be written outside the project root (${dir ?? "its real path cannot be told"})`);
    if (!(await unchanged())) throw new LocalChanged("it changed here meanwhile: kept");
    try {
      await fsp.rename(temp, abs);
    } catch (error) {
      if (errorCode(error) === "EXDEV") return "other-device";
      throw error;
    }
    renamed = true;
    return true;
  } finally {
    await handle.close().catch(() => undefined);
    if (!renamed) await fsp.unlink(temp).catch(() => undefined);
  }
}

/** Removes a file the base says is ours, unless it changed since it was looked at. */
export async function removeUnchanged(abs: string, unchanged: Precondition): Promise<void> {
  if (!(await unchanged())) throw new LocalChanged("it changed here meanwhile: kept");
  await fsp.unlink(abs);
}

/**
 * Removes the directories between `top` (kept) and `abs` that are empty now, from the deepest up,
 * as a pull that moved a directory away leaves none behind; returns the deepest one that stays.
 * rmdir removes only an empty directory: one holding anything (an ignored file, a file made
 * meanwhile, an empty directory someone made) stays, and so does every one above it.
 */
export async function removeEmptiedParents(top: string, abs: string): Promise<string> {
  let dir = path.dirname(abs);
  while (dir !== top && isInside(top, dir)) {
    const removed = await fsp.rmdir(dir).then(
      () => true,
      () => false,
    );
    if (!removed) break;
    dir = path.dirname(dir);
  }
  return dir;
}

/**
 * Checks each directory between the root and `abs` with lstat, never descending through a symlink
 * or a file: their reason, or "missing" for the first that does not exist (nothing below it does).
 * With `create`, a missing one is made instead, one at a time.
 */
export async function parentProblem(root: string, abs: string, create = false): Promise<string | "missing" | undefined> {
  const parts = path
    .relative(root, path.dirname(abs))
    .split(path.sep)
    .filter((part) => part !== "");
  let current = root;
  for (const part of parts) {
    current = path.join(current, part);
    const rel = path.relative(root, current).split(path.sep).join("/");
    let stat = await lstatOrCode(current);
    if (stat === "ENOENT" && create) {
      // mkdir never follows a symlink in its last component: a link made meanwhile is an EEXIST.
      await fsp.mkdir(current).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      stat = await lstatOrCode(current);
    }
    if (stat === "ENOENT") return "missing";
    if (typeof stat === "string") return `cannot look at ${rel} (${stat})`;
    if (stat.isSymbolicLink()) return `it would be written through the symlink ${rel}`;
    if (!stat.isDirectory()) return `${rel} is a file here, not a directory`;
  }
  return undefined;
}

async function lstatOrCode(abs: string): Promise<Stats | string> {
  return fsp.lstat(abs).catch((error: NodeJS.ErrnoException) => error.code ?? "EIO");
}

/** Makes the renames and unlinks in these directories durable. */
export async function syncDirectories(dirs: Iterable<string>): Promise<void> {
  for (const dir of new Set(dirs)) await fsyncDirQuietly(dir);
}
