import { fsyncDirQuietly } from "./fsync-dir.js";
import { nodeCrypto } from "./lazy-builtins.js";
import { closeSync, constants, lstatSync, mkdirSync, openSync, promises as fsp, readdirSync, readFileSync, realpathSync, rmdirSync, statSync, unlinkSync, writeSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * Every file of ours under `<root>/.uspark/` (journal, state, spool, cookies) is read and written
 * here, and only here. A cloned repository may ship `.uspark` as a symlink, or
 * `.uspark/pending.json` as one, to make us write or print a file outside the project: the
 * directory must be a real directory and files are opened with O_NOFOLLOW. Writes are atomic
 * (temp file, fsync, rename, fsync of the directory); `withLock` serialises read-modify-write
 * cycles of two processes on one root.
 *
 * The checks of `.uspark`, its making and unmaking, its `.gitignore`, the lock files and the
 * settle cookies are synchronous calls: each is one system call of a few microseconds on the
 * project's own directory, where a promise of node:fs costs some 50 µs of CPU more (a trip
 * through the thread pool, 0.2 ms and more on a busy 2-core VM), and a save or a settle makes
 * several. Whatever moves a file's content, or waits for the disk (fsync), stays asynchronous.
 */

export const STATE_DIR = ".uspark";

/** `.uspark` or one of its files is a symlink or not what it should be: refused, never followed. */
export class StateDirError extends Error {
  override readonly name = "StateDirError";
}

export function stateDirPath(root: string): string {
  return path.join(root, STATE_DIR);
}

export function stateFilePath(root: string, name: string): string {
  return path.join(root, STATE_DIR, name);
}

/** Throws a StateDirError when `.uspark` exists but is not a real directory. Returns whether it exists. */
function checkDir(root: string): boolean {
  const dir = stateDirPath(root);
  try {
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) throw new StateDirError(`${dir} is a symlink; refusing to use it (remove it, uspark recreates the directory)`);
    if (!stat.isDirectory()) throw new StateDirError(`${dir} is not a directory; refusing to use it`);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
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
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
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
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw refusedLink(file, error);
  }
}

/** Creates `file`, which must not exist yet (EEXIST), never through a symlink, with a few bytes in it. */
function writeNewFile(file: string, text: string, mode: number): void {
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

function refusedLink(file: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
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
    if (use === "read" && (error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
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
function unlinkIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Renames a file of ours aside (a corrupt journal), inside `.uspark`. */
export async function moveStateFileAside(root: string, name: string, asideName: string): Promise<string> {
  checkDir(root);
  const aside = stateFilePath(root, asideName);
  await fsp.rename(stateFilePath(root, name), aside);
  return aside;
}

const TEMP_DIR = "tmp";
const OWN_TEMP = /^(\d+)-[0-9a-f]+\.tmp$/;
/** writeStateFile's temp beside its target: `<name>.<pid>-<hex>.tmp`. */
const STATE_TEMP = /^[^/]+\.(\d+)-[0-9a-f]{12}\.tmp$/;

/**
 * `.uspark/tmp`, made if need be (a real directory, never a symlink): where a pulled file is
 * written before it is renamed into place (disk-write.ts), out of every scan's sight.
 */
export async function ownTempDir(root: string): Promise<string> {
  const dir = path.join(await ensureDir(root), TEMP_DIR);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new StateDirError(`${dir} is not a directory; refusing to use it`);
  return dir;
}

/**
 * Removes the temp files a process that is gone left: in `.uspark/tmp` (a pull killed mid-write)
 * and in `.uspark/` itself (writeStateFile's, of the state file or an intent); a live one's stay.
 */
export async function removeOwnTemps(root: string): Promise<void> {
  if (!checkDir(root)) return;
  removeTempsOfTheGone(path.join(stateDirPath(root), TEMP_DIR), OWN_TEMP);
  removeTempsOfTheGone(stateDirPath(root), STATE_TEMP);
}

function removeTempsOfTheGone(dir: string, shape: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(shape.exec(name)?.[1]);
    if (pid > 0 && processGone(pid, "")) unlinkIfThere(path.join(dir, name));
  }
}

/** The root's watcher lock is held by another live process. */
export class RootLockHeld extends Error {
  override readonly name = "RootLockHeld";
  constructor(
    readonly root: string,
    readonly pid: number,
  ) {
    super(`another uspark (pid ${pid}) is already watching ${root}`);
  }
}

export interface RootLock {
  /** Removes the lock, if it is still ours. */
  release(): Promise<void>;
}

const ROOT_LOCK = "lock";

/**
 * `.uspark/lock`: one watcher (watch or run) per root. It names its holder's pid, the root (real
 * path, device and inode) and the boot (Linux's boot_id): a lock copied with the tree (`cp -a`),
 * or left by a boot before (a container restarted: its pids are reused), is not this root's now
 * and is taken over, said by `onTakeOver`; so is one whose process is gone (or is no uspark). A
 * live holder is not waited for: throws RootLockHeld at once.
 */
export async function takeRootLock(root: string, onTakeOver: (why: string) => void = () => {}): Promise<RootLock> {
  const lock = path.join(await ensureDir(root), ROOT_LOCK);
  const ours = lockIdentity(root);
  for (let attempt = 0; ; attempt++) {
    try {
      writeNewFile(lock, lockText(ours), 0o600);
      return { release: () => releaseRootLock(lock) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw refusedLink(lock, error);
      const found = parseLockText(await fsp.readFile(lock, "utf8").catch(() => ""));
      const foreign = found && foreignLock(found, ours);
      // A half-written lock (its holder is starting this very moment) is given a moment.
      if (found === undefined && attempt < 20) await new Promise((resolve) => setTimeout(resolve, 10));
      else if (found !== undefined && !foreign && found.pid !== process.pid && isUsparkProcess(found.pid)) throw new RootLockHeld(root, found.pid);
      else {
        if (foreign) onTakeOver(`took over ${lock}: pid ${found!.pid} holds it ${foreign}, not for this one`);
        unlinkIfThere(lock);
      }
    }
  }
}

/** Who holds a root lock: the process, the root it was taken for, and the boot it was taken in. */
export interface LockIdentity {
  pid: number;
  /** The root's real path. */
  root: string;
  /** `<device>:<inode>` of the root directory. */
  dir: string;
  /** The kernel's boot id, "" where there is none (not Linux). */
  boot: string;
}

function lockIdentity(root: string): LockIdentity {
  const stat = statSync(root);
  return { pid: process.pid, root: realpathSync(root), dir: `${stat.dev}:${stat.ino}`, boot: thisBoot() };
}

let boot: string | undefined;

/** The kernel's boot id (Linux), "" where there is none: a pid of another boot is no process of now. */
export function thisBoot(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      boot = ""; // no boot id (macOS): the pid check alone
    }
  }
  return boot;
}

/** Whether the process that wrote `pid` (in boot `bootId`) is gone: not this one, and not alive as a uspark now. */
export function processGone(pid: number, bootId: string): boolean {
  if (bootId !== "" && thisBoot() !== "" && bootId !== thisBoot()) return true;
  return pid !== process.pid && !isUsparkProcess(pid);
}

/** The pid first (as older versions wrote it alone), then one `key value` line each. */
function lockText(id: LockIdentity): string {
  return `${id.pid}\nroot ${id.root}\ndir ${id.dir}\nboot ${id.boot}\n`;
}

/** The lock's holder; undefined for a half-written or garbled lock. A lock of an older version (the pid alone) has no root or boot: only its pid is checked. */
export function parseLockText(text: string): LockIdentity | undefined {
  const [first, ...rest] = text.split("\n");
  const pid = Number.parseInt(first ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const field = (key: string) => rest.find((line) => line.startsWith(`${key} `))?.slice(key.length + 1) ?? "";
  return { pid, root: field("root"), dir: field("dir"), boot: field("boot") };
}

/** Why a lock is not this root's in this boot (it is taken over), or undefined when it may be. */
export function foreignLock(found: LockIdentity, ours: LockIdentity): string | undefined {
  if (found.boot !== "" && ours.boot !== "" && found.boot !== ours.boot) return "from an earlier boot";
  // The directory itself, not its path: a tree renamed while its watcher runs is still that watcher's.
  if (found.dir !== "") return found.dir === ours.dir ? undefined : `for ${found.root}, another directory (this one is a copy of it?)`;
  return undefined;
}

async function lockHolder(lock: string): Promise<number | undefined> {
  const text = await fsp.readFile(lock, "utf8").catch(() => "");
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function releaseRootLock(lock: string): Promise<void> {
  if ((await lockHolder(lock)) === process.pid) unlinkIfThere(lock);
}

/** Whether `pid` is alive and, where /proc tells (Linux), a uspark process. */
function isUsparkProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("uspark");
  } catch {
    return true; // no /proc (macOS) or not ours to read: alive is all we know
  }
}

export interface LockOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** A lock older than this whose holder cannot be checked is taken as stale. Default 60 s. */
  staleMs?: number;
}

/**
 * Runs `work` while holding `<name>.lock` (created with O_EXCL; it holds the owner's pid). A lock
 * whose process is gone is broken; a live holder is waited for, with a bound.
 */
export async function withLock<T>(root: string, name: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const dir = await ensureDir(root);
  const lock = path.join(dir, `${name}.lock`);
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      createLockFile(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw refusedLink(lock, error);
      if (await isStale(lock, options.staleMs ?? 60_000)) {
        unlinkIfThere(lock);
        continue;
      }
      if (Date.now() > deadline) throw new StateDirError(`${lock} is held by another uspark process; gave up waiting`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  try {
    return await work();
  } finally {
    unlinkIfThere(lock);
  }
}

/** Creates `lock` with our pid in it; EEXIST when it is there already. */
function createLockFile(lock: string): void {
  writeNewFile(lock, `${process.pid}\n`, 0o600);
}

async function isStale(lock: string, staleMs: number): Promise<boolean> {
  let text: string;
  let mtime: number;
  try {
    const stat = await fsp.lstat(lock);
    if (!stat.isFile()) return false;
    mtime = stat.mtimeMs;
    text = await fsp.readFile(lock, "utf8");
  } catch {
    return false; // gone already: the next try takes it
  }
  const pid = Number.parseInt(text, 10);
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - mtime > Math.min(staleMs, 1000); // half-written, or garbage
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
