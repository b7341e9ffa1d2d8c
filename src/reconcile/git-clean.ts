import { execFile } from "node:child_process";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { mapLimit } from "../util/map-limit.js";
import { selfAndAncestors } from "../paths/paths.js";
import { localStatOf, type LocalStat } from "./base-keeper.js";
import { errorCode } from "../errors/text.js";

/**
 * The files of a git checkout that git reports clean (tracked, unchanged since the checkout):
 * recoverable from git, so with no base entry they count as unchanged and the remote wins
 * (docs/sync.md#fresh-checkouts). Only modified and untracked files can conflict. No git, or no repository:
 * none, and the "no base" rows apply to every file.
 *
 * git's answer is true when it is given; a file edited after it is not clean any more. So each
 * tracked file is stat'ed before git is asked, and a file counts as clean only while it still has
 * that stat (an edit during or after the question changes it).
 */

const MAX_BUFFER = 512 * 1024 * 1024;

/** Clean tracked files under `dir` (the root, or root/prefix), by path relative to `dir`: the stat each had before git was asked. */
export async function gitCleanFiles(dir: string): Promise<Map<string, LocalStat>> {
  if (!(await mayBeGitCheckout(dir))) return new Map();
  try {
    const top = (await git(dir, ["rev-parse", "--show-toplevel"])).trim();
    const below = path.relative(top, dir).split(path.sep).join("/");
    const strip = below === "" ? 0 : below.length + 1;
    const tracked = (await git(dir, ["ls-files", "-z", "--cached", "--full-name", "--", "."]))
      .split("\0")
      .filter((f) => f !== "" && (strip === 0 || f.startsWith(below + "/")));
    const stats = await mapLimit(tracked, 32, (file) => fsp.lstat(path.join(top, file)).catch(() => undefined));
    // `status` refreshes the index's stat cache, so a file merely touched since the checkout is clean.
    const changed = changedPaths(await git(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--", "."]));
    const clean = new Map<string, LocalStat>();
    tracked.forEach((file, i) => {
      const stat = stats[i];
      if (stat?.isFile() && !changed.has(file)) clean.set(file.slice(strip), localStatOf(stat));
    });
    return clean;
  } catch {
    return new Map();
  }
}

/**
 * Whether git could find a repository for `dir`: GIT_DIR or GIT_WORK_TREE set, or a `.git` (a
 * directory, or a file: linked worktrees, submodules) in `dir` or above it. Looked at before git
 * is asked because most roots outside a checkout would pay a git process on their first sync
 * (about 11 ms of CPU for the spawn alone). It may say yes where git finds nothing
 * (GIT_CEILING_DIRECTORIES, a bare repository): git then answers, as it did before.
 */
async function mayBeGitCheckout(dir: string): Promise<boolean> {
  if (process.env.GIT_DIR || process.env.GIT_WORK_TREE) return true;
  for (const at of selfAndAncestors(dir)) if (await exists(path.join(at, ".git"))) return true;
  return false;
}

/** Anything there, or an error that does not say it is absent (then git is asked). */
async function exists(file: string): Promise<boolean> {
  try {
    await fsp.lstat(file);
    return true;
  } catch (error) {
    const code = errorCode(error);
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/** Paths (from the repository's top) that `git status --porcelain=v1 -z` lists as changed; a rename names both. */
export function changedPaths(status: string): Set<string> {
  const changed = new Set<string>();
  const fields = status.split("\0");
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i]!;
    if (entry.length < 4) continue;
    changed.add(entry.slice(3));
    // "R  new\0old": the old path follows as a field of its own.
    if (entry[0] === "R" || entry[0] === "C") changed.add(fields[++i] ?? "");
  }
  return changed;
}

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["-c", "core.quotepath=off", ...args],
      { cwd, maxBuffer: MAX_BUFFER, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}
