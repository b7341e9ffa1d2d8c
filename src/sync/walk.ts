import { promises as fsp } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { BUILTIN_IGNORES, isInside } from "../paths.js";
import type { Reporter } from "../report.js";

/**
 * Every file under a directory that `uspark push` should consider: regular files only, symlinks
 * never followed, the built-in ignores, `.gitignore` files (at every level, the deeper one
 * deciding, as git does) and --ignore globs. Ignored directories are not entered.
 */

export interface WalkOptions {
  /** The real path of the project root; ignore rules are relative to it. */
  root: string;
  /** The real path of the directory to walk (the root or a directory inside it). */
  start?: string;
  /** Extra gitignore-style patterns, relative to the root. */
  ignore?: readonly string[];
  report?: Reporter;
}

interface Level {
  /** Directory of the .gitignore, relative to the root ("" for the root). */
  dir: string;
  rules: Ignore;
}

/** Yields the absolute paths of the files, depth first, in name order. */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<string> {
  const root = options.root;
  const start = options.start ?? root;
  if (!isInside(root, start)) throw new Error(`${start} is outside the project root ${root}`);
  const builtin = ignore().add([...BUILTIN_IGNORES]);
  const user = ignore().add([...(options.ignore ?? [])]);

  // .gitignore files above the start directory apply too.
  const levels: Level[] = [];
  const startRel = toPosix(path.relative(root, start));
  const ancestors = startRel === "" ? [""] : ["", ...startRel.split("/").map((_, i, all) => all.slice(0, i + 1).join("/"))];
  for (const dir of ancestors.slice(0, -1)) {
    const level = await loadGitignore(root, dir);
    if (level) levels.push(level);
  }
  if (startRel !== "" && isIgnored(startRel, true)) return;

  yield* walk(startRel, levels);

  async function* walk(dir: string, inherited: Level[]): AsyncGenerator<string> {
    const own = await loadGitignore(root, dir);
    const active = own ? [...inherited, own] : inherited;
    let entries;
    try {
      entries = await fsp.readdir(path.join(root, dir), { withFileTypes: true });
    } catch (error) {
      options.report?.warn("walk", `cannot read directory ${dir || "."}: ${(error as NodeJS.ErrnoException).code ?? error}`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.isSymbolicLink()) {
        options.report?.debug("walk", `not followed: ${rel} is a symlink`, { path: rel });
        continue;
      }
      const isDir = entry.isDirectory();
      if (!isDir && !entry.isFile()) continue;
      if (isIgnoredBy(rel, isDir, active)) continue;
      if (isDir) yield* walk(rel, active);
      else yield path.join(root, ...rel.split("/"));
    }
  }

  function isIgnored(rel: string, isDir: boolean): boolean {
    return isIgnoredBy(rel, isDir, levels);
  }

  function isIgnoredBy(rel: string, isDir: boolean, active: Level[]): boolean {
    const probe = isDir ? `${rel}/` : rel;
    if (builtin.ignores(probe) || user.ignores(probe)) return true;
    let ignored = false;
    for (const level of active) {
      const local = level.dir === "" ? probe : probe.slice(level.dir.length + 1);
      const verdict = level.rules.test(local);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }
}

async function loadGitignore(root: string, dir: string): Promise<Level | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(root, dir, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  return { dir, rules: ignore().add(text) };
}

function toPosix(p: string): string {
  return p.split(path.sep).join("/");
}
