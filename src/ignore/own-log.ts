import { fstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

/**
 * A watcher whose stdout or stderr is a file inside the tree it watches (a daemon's log, sent
 * there by its supervisor: `uspark watch --no-stdin 2>> logs/uspark.log`) would sync its own log:
 * each line it writes is a change, whose push writes a line, in a loop. Such a file is never
 * synced, wherever it is in the tree: an anchored `--ignore` glob of its exact path. Found through
 * /proc/self/fd (Linux); elsewhere nothing is found.
 */
export function ownLogIgnores(root: string, say: (rel: string, stream: string) => void): string[] {
  const globs: string[] = [];
  const seen = new Set<string>();
  for (const [fd, stream] of [
    [1, "stdout"],
    [2, "stderr"],
  ] as const) {
    const rel = ownFileInside(root, fd);
    if (rel === undefined || seen.has(rel)) continue;
    seen.add(rel);
    say(rel, stream);
    globs.push(globOf(rel));
  }
  return globs;
}

/** The root-relative path of the regular file open at `fd`, when it is inside `root`. */
function ownFileInside(root: string, fd: number): string | undefined {
  try {
    const open = fstatSync(fd);
    if (!open.isFile()) return undefined;
    const file = readlinkSync(`/proc/self/fd/${fd}`);
    const rel = path.relative(realpathSync(root), file);
    if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
    // The link names the file still (not one renamed or removed since: " (deleted)").
    const named = statSync(file);
    return named.ino === open.ino && named.dev === open.dev ? rel.split(path.sep).join("/") : undefined;
  } catch {
    return undefined;
  }
}

/** An anchored gitignore line matching exactly `rel`: wildcards, backslashes and spaces escaped. */
export function globOf(rel: string): string {
  return `/${rel.replace(/[\\*?[ ]/g, (c) => `\\${c}`)}`;
}
