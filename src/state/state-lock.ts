import { nodeCrypto } from "../util/lazy-builtins.js";
import { linkSync, lstatSync, promises as fsp, readFileSync, realpathSync, renameSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { ensureDir, refusedLink, StateDirError, unlinkIfThere, writeNewFile } from "./state-dir.js";
import { errorCode } from "../errors/text.js";
import { UsparkError } from "../errors/base.js";

/**
 * The lock files under `.uspark/`: `lock` (one watcher per root) and `<name>.lock` (a short
 * read-modify-write of one state file). Each names its holder: pid, the process's start time
 * (a pid alive again after a container restart is another process: same kernel, same boot id,
 * pids counted from 1 again), the root (real path, device and inode: a lock copied with the tree
 * is not the copy's) and the boot. A stale lock is taken over atomically: it is renamed aside and
 * removed only if what was renamed is the very lock judged stale (two takers at once: one wins,
 * the other puts back what it moved and waits).
 */

/** Who holds a lock: the process, when it started, the root it was taken for, and the boot it was taken in. */
export interface LockIdentity {
  pid: number;
  /** The process's start time in clock ticks after boot (/proc/<pid>/stat), "" where unknown. */
  start: string;
  /** The root's real path. */
  root: string;
  /** `<device>:<inode>` of the root directory. */
  dir: string;
  /** The kernel's boot id, "" where there is none (not Linux). */
  boot: string;
}

function lockIdentity(root: string): LockIdentity {
  const stat = statSync(root);
  return { pid: process.pid, start: processStart(process.pid), root: realpathSync(root), dir: `${stat.dev}:${stat.ino}`, boot: thisBoot() };
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

/** When `pid` started (field 22 of /proc/<pid>/stat, after the parenthesised name), "" where unknown. */
export function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/** Whether the process that wrote `pid` (in boot `bootId`, started at `start`) is gone: not this one, and not alive as a uspark now. */
export function processGone(pid: number, bootId: string, start = ""): boolean {
  if (bootId !== "" && thisBoot() !== "" && bootId !== thisBoot()) return true;
  if (start !== "" && !sameStart(pid, start)) return true;
  return pid !== process.pid && !isUsparkProcess(pid);
}

/** Whether `pid`, if alive, is the process that started at `start` (unknown here: taken as the same). */
function sameStart(pid: number, start: string): boolean {
  const now = processStart(pid);
  return now === "" || now === start;
}

/** The pid first (as older versions wrote it alone), then one `key value` line each. */
function lockText(id: LockIdentity): string {
  return `${id.pid}\nstart ${id.start}\nroot ${id.root}\ndir ${id.dir}\nboot ${id.boot}\n`;
}

/** The lock's holder; undefined for a half-written or garbled lock. A lock of an older version (the pid alone) has no root or boot: only its pid is checked. */
export function parseLockText(text: string): LockIdentity | undefined {
  const [first, ...rest] = text.split("\n");
  const pid = Number.parseInt(first ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const field = (key: string) => rest.find((line) => line.startsWith(`${key} `))?.slice(key.length + 1) ?? "";
  return { pid, start: field("start"), root: field("root"), dir: field("dir"), boot: field("boot") };
}

/** Why a lock is not this root's in this boot (it is taken over), or undefined when it may be. */
export function foreignLock(found: LockIdentity, ours: LockIdentity): string | undefined {
  if (found.boot !== "" && ours.boot !== "" && found.boot !== ours.boot) return "from an earlier boot";
  // The directory itself, not its path: a tree renamed while its watcher runs is still that watcher's.
  if (found.dir !== "") return found.dir === ours.dir ? undefined : `for ${found.root}, another directory (this one is a copy of it?)`;
  return undefined;
}

/** Why the holder of a lock of this root and boot holds it no more, or undefined while it may. */
function holderGone(found: LockIdentity, ours: LockIdentity): string | undefined {
  if (found.start !== "" && ours.start !== "" && found.pid === ours.pid)
    return found.start === ours.start ? undefined : "an earlier process with this pid";
  if (!isAlive(found.pid)) return "its process is gone";
  if (found.start !== "" && !sameStart(found.pid, found.start)) return "its pid is another process now";
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) !== "ESRCH";
  }
}

/** Whether `pid` is alive and, where /proc tells (Linux), a uspark process. */
function isUsparkProcess(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("uspark");
  } catch {
    return true; // no /proc (macOS) or not ours to read: alive is all we know
  }
}

/** A lock as read: its file (to take over only that one), its text and holder. */
interface FoundLock {
  stat: Stats;
  text: string;
  holder: LockIdentity | undefined;
}

/** The lock at `lock` as one open file, or undefined when it is gone (or no regular file: never ours to judge). */
async function readLock(lock: string): Promise<FoundLock | undefined> {
  try {
    const handle = await fsp.open(lock, "r");
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return undefined;
      const text = await handle.readFile("utf8");
      return { stat, text, holder: parseLockText(text) };
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Removes the stale lock `judged` from `lock`, atomically: renamed aside first, then removed only
 * if it is that very file; else (another taker removed it and a live process took the lock since)
 * what was moved is put back. Put back unless a third process took the free path in that instant.
 */
function takeOver(lock: string, judged: FoundLock): void {
  // A temp name removeOwnTemps clears if this process is killed right here.
  const aside = `${lock}.${process.pid}-${nodeCrypto().randomBytes(6).toString("hex")}.tmp`;
  try {
    renameSync(lock, aside);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return; // another taker was first
    throw error;
  }
  const moved = lstatSync(aside);
  const same = moved.ino === judged.stat.ino && moved.dev === judged.stat.dev && readFileSync(aside, "utf8") === judged.text;
  if (!same) {
    try {
      linkSync(aside, lock);
    } catch {
      // A third process took the path meanwhile: the lock is its now.
    }
  }
  unlinkIfThere(aside);
}

/** The root's watcher lock is held by another live process. */
export class RootLockHeld extends UsparkError {
  readonly code = "root_lock_held";
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
 * `.uspark/lock`: one watcher (watch or run) per root. A lock copied with the tree (`cp -a`), or
 * left by a boot before, is not this root's now and is taken over, said by `onTakeOver`; so is
 * one whose process is gone (or is no uspark, or is another process under the same pid). A live
 * holder is not waited for: throws RootLockHeld at once.
 */
export async function takeRootLock(root: string, onTakeOver: (why: string) => void = () => {}): Promise<RootLock> {
  const lock = path.join(await ensureDir(root), ROOT_LOCK);
  const ours = lockIdentity(root);
  const text = lockText(ours);
  for (let attempt = 0; ; attempt++) {
    try {
      writeNewFile(lock, text, 0o600);
      return { release: () => releaseLock(lock, text) };
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw refusedLink(lock, error);
    }
    const found = await readLock(lock);
    if (found === undefined) continue; // gone already: the next try takes it
    const { holder } = found;
    // A half-written lock (its holder is starting this very moment) is given a moment.
    if (holder === undefined && attempt < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    else {
      const foreign = holder && foreignLock(holder, ours);
      const live =
        holder !== undefined &&
        !foreign &&
        holder.pid !== process.pid &&
        holderGone(holder, ours) === undefined &&
        isUsparkProcess(holder.pid);
      if (live) throw new RootLockHeld(root, holder.pid);
      if (foreign) onTakeOver(`took over ${lock}: pid ${holder!.pid} holds it ${foreign}, not for this one`);
      takeOver(lock, found);
    }
  }
}

/** Removes our lock if it is still ours (its text names this process, root and boot). */
async function releaseLock(lock: string, text: string): Promise<void> {
  if ((await readLock(lock))?.text === text) unlinkIfThere(lock);
}

export interface LockOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** A half-written lock older than this is taken as stale (at most 1 s). Default 60 s. */
  staleMs?: number;
}

/**
 * Runs `work` while holding `<name>.lock` (created with O_EXCL; it names its holder as the root
 * lock does). A lock whose process is gone, is another process now, or is of another boot or
 * another root (a copy) is taken over; a live holder is waited for, with a bound.
 */
export async function withLock<T>(root: string, name: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = path.join(await ensureDir(root), `${name}.lock`);
  const ours = lockIdentity(root);
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      writeNewFile(lock, lockText(ours), 0o600);
      break;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw refusedLink(lock, error);
      const found = await readLock(lock);
      if (found === undefined) continue;
      if (isStale(found, ours, options.staleMs ?? 60_000)) {
        takeOver(lock, found);
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

function isStale(found: FoundLock, ours: LockIdentity, staleMs: number): boolean {
  const { holder } = found;
  if (holder === undefined) return Date.now() - found.stat.mtimeMs > Math.min(staleMs, 1000); // half-written, or garbage
  if (holder.pid === process.pid && (holder.start === "" || holder.start === ours.start)) return false;
  return foreignLock(holder, ours) !== undefined || holderGone(holder, ours) !== undefined;
}
