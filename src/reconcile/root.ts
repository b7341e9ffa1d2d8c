import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { selfAndAncestors } from "../paths/paths.js";
import { STATE_NAME } from "./state-store.js";
import { STATE_DIR } from "../state/state-dir.js";

/**
 * Which directory a command works on when no --root names one, as git finds its work tree: the
 * nearest ancestor of `cwd` (itself included) holding `.uspark/state.json`, else `cwd`. `$HOME` is
 * never found this way: its `.uspark/` holds the user's config, and a root there would take in
 * every project below it.
 */
export function findRoot(cwd: string, home: string | undefined): string {
  const homes = homeSpellings(home);
  for (const dir of selfAndAncestors(cwd)) if (!homes.has(dir) && holdsState(dir)) return dir;
  return path.resolve(cwd);
}

/** `$HOME` as given and as resolved: the current directory is a real path, HOME may be a link. */
function homeSpellings(home: string | undefined): Set<string> {
  if (!home) return new Set();
  const spellings = new Set([path.resolve(home)]);
  try {
    spellings.add(realpathSync(home));
  } catch {
    // a HOME that does not exist cannot be an ancestor either
  }
  return spellings;
}

/** A real `.uspark/` directory with a state file in it; links are not followed (state-dir.ts refuses them too). */
function holdsState(dir: string): boolean {
  try {
    return lstatSync(path.join(dir, STATE_DIR)).isDirectory() && lstatSync(path.join(dir, STATE_DIR, STATE_NAME)).isFile();
  } catch {
    return false;
  }
}
