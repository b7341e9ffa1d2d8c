import { execFile } from "node:child_process";
import path from "node:path";

/**
 * The files of a git checkout that git reports clean (tracked, unchanged since the checkout):
 * recoverable from git, so with no base entry they count as unchanged and the remote wins
 * (design.md §1c). Only modified and untracked files can conflict. No git, or no repository:
 * an empty set, and the "no base" rows apply to every file.
 */

const MAX_BUFFER = 512 * 1024 * 1024;

/** Clean tracked files under `dir` (the root, or root/prefix), as paths relative to `dir`. */
export async function gitCleanFiles(dir: string): Promise<Set<string>> {
  try {
    const top = (await git(dir, ["rev-parse", "--show-toplevel"])).trim();
    // `status` refreshes the index's stat cache, so a file merely touched since the checkout is clean.
    const [tracked, status] = await Promise.all([git(dir, ["ls-files", "-z", "--cached", "--full-name", "--", "."]), git(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--", "."])]);
    const changed = changedPaths(status);
    const below = path.relative(top, dir).split(path.sep).join("/");
    const strip = below === "" ? 0 : below.length + 1;
    const clean = new Set<string>();
    for (const file of tracked.split("\0")) {
      if (file === "" || changed.has(file)) continue;
      if (strip === 0 || file.startsWith(below + "/")) clean.add(file.slice(strip));
    }
    return clean;
  } catch {
    return new Set();
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
    execFile("git", ["-c", "core.quotepath=off", ...args], { cwd, maxBuffer: MAX_BUFFER, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}
