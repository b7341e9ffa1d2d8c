import { readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Where the git repository around a root keeps the rules that apply from outside the root. */
export interface Repository {
  /** The work tree's top directory. */
  top: string;
  /** The directories strictly between the top and the root, deepest first (their .gitignore applies). */
  above: string[];
  /** `info/exclude` of the repository (of the main one, for a linked worktree). */
  excludeFile: string;
}

/** The repository whose work tree holds `root` (a real path), if any: a `.git` directory or file. */
export function findRepository(root: string): Repository | undefined {
  const above: string[] = [];
  for (let dir = root; ;) {
    const dotGit = path.join(dir, ".git");
    const kind = kindOf(dotGit);
    if (kind === "dir") return { top: dir, above, excludeFile: path.join(dotGit, "info", "exclude") };
    if (kind === "file") return { top: dir, above, excludeFile: path.join(gitDirOfLink(dotGit, dir), "info", "exclude") };
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    above.push(parent);
    dir = parent;
  }
}

/** A `.git` file says `gitdir: <dir>`; a linked worktree's dir names the shared one in `commondir`. */
function gitDirOfLink(dotGit: string, top: string): string {
  const text = readText(dotGit);
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!match) return dotGit;
  const gitDir = path.resolve(top, match[1]!);
  const common = readText(path.join(gitDir, "commondir")).trim();
  return common === "" ? gitDir : path.resolve(gitDir, common);
}

function kindOf(candidate: string): "dir" | "file" | undefined {
  try {
    const st = statSync(candidate, { throwIfNoEntry: false });
    return st?.isDirectory() ? "dir" : st?.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

/** The file's text; "" when it cannot be read (a rule file that is not there has no rules). */
export function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
