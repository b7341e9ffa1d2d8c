import { promises as fsp, type Dirent } from "node:fs";
import path from "node:path";
import { IgnoreEngine } from "../ignore/engine.js";
import { isInside } from "../paths.js";
import type { Reporter } from "../report.js";
import { utf8Name, warnNotUtf8 } from "../fswatch/names.js";

/**
 * Every file under a directory that `uspark push` (or a scan) should consider: regular files
 * only, symlinks never followed, and nothing the one ignore engine excludes (built-ins,
 * `.gitignore` files at every level, `.git/info/exclude`, --ignore). Ignored directories are not
 * entered. A name that is not valid UTF-8 cannot be a project path: it is named in a warning (once
 * per file for the whole run, however many scans walk past it) and passed to `onUnsyncable`.
 */

export interface WalkOptions {
  /** The real path of the project root; ignore rules are relative to it. */
  root: string;
  /** The real path of the directory to walk (the root or a directory inside it). */
  start?: string;
  /** Extra gitignore-style patterns, relative to the root (when no `ignoreEngine` is given). */
  ignore?: readonly string[];
  /**
   * The session's ignore engine (shared with the path policy and the watcher). Its rule files may
   * have changed since it read them (nothing watched them, or their event is still on the way):
   * in each directory walked, the ones that apply are stat'ed and re-read if they changed.
   */
  ignoreEngine?: IgnoreEngine;
  report?: Reporter;
  /**
   * A file that can never be synced: its name is not valid UTF-8. Given escaped and root-relative
   * (a directory's with a trailing `/`: nothing below it is walked), and as `key`, the path the
   * warning about it is said once under (see `warnNotUtf8`).
   */
  onUnsyncable?: (escapedRel: string, key: string) => void;
  /** Checked before each directory is read: an aborted walk throws the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Yields the absolute paths of the files, depth first, in name order. One generator with a stack
 * of open directories, not one per level: a file deep down costs no more to hand out than one at
 * the top, so a walk is linear in the depth of the tree. `signal` is checked between directories.
 */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<string> {
  const root = options.root;
  const start = options.start ?? root;
  if (!isInside(root, start)) throw new Error(`${start} is outside the project root ${root}`);
  const engine = options.ignoreEngine ?? new IgnoreEngine({ root, ignore: options.ignore });
  /** A new engine reads every rule file as it is now; a shared one is brought up to date as the walk goes. */
  const refresh = options.ignoreEngine !== undefined;
  const startRel = path.relative(root, start).split(path.sep).join("/");
  if (startRel !== "" && engine.check(startRel, true, { fresh: true })) return;
  // The rule files above the start and its own, once; each directory below re-reads only its own.
  if (refresh) engine.check(startRel === "" ? ".gitignore" : `${startRel}/.gitignore`, false, { fresh: true });
  const stack: OpenDirectory[] = [];
  const open = async (dir: string) => {
    options.signal?.throwIfAborted();
    if (refresh && dir !== startRel) engine.refreshDir(dir);
    const entries = await readDirectory(root, dir, options.report);
    if (entries) stack.push({ dir, entries, next: 0 });
  };
  await open(startRel);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const entry = top.entries[top.next++];
    if (!entry) {
      stack.pop();
      continue;
    }
    const found = classify(top.dir, entry);
    if (found.kind === "directory") await open(found.rel);
    else if (found.kind === "file") yield path.join(root, ...found.rel.split("/"));
  }

  type Found = { kind: "directory" | "file"; rel: string } | { kind: "none" };

  function classify(dir: string, entry: Dirent<Buffer>): Found {
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile() && !entry.isSymbolicLink()) return { kind: "none" };
    const name = utf8Name(entry.name);
    if (name.valid === false) {
      const rel = dir === "" ? name.escaped : `${dir}/${name.escaped}`;
      if (!engine.checkEntry(dir, name.escaped, isDir)) unsyncable(isDir ? `${rel}/` : rel);
      return { kind: "none" };
    }
    const rel = dir === "" ? name.name : `${dir}/${name.name}`;
    if (entry.isSymbolicLink()) {
      options.report?.debug("walk", `not followed: ${rel} is a symlink`, { path: rel });
      return { kind: "none" };
    }
    if (engine.checkEntry(dir, name.name, isDir)) return { kind: "none" };
    return { kind: isDir ? "directory" : "file", rel };
  }

  function unsyncable(rel: string): void {
    options.onUnsyncable?.(rel, warnNotUtf8(options.report, root, rel));
  }
}

interface OpenDirectory {
  dir: string;
  /** Sorted by name (bytes). */
  entries: Dirent<Buffer>[];
  next: number;
}

/** The entries of a directory, sorted; undefined (with a warning) when it cannot be read. */
async function readDirectory(root: string, dir: string, report: Reporter | undefined): Promise<Dirent<Buffer>[] | undefined> {
  try {
    const entries = await fsp.readdir(path.join(root, dir), { withFileTypes: true, encoding: "buffer" });
    return entries.sort((a, b) => Buffer.compare(a.name, b.name));
  } catch (error) {
    report?.warn("walk", `cannot read directory ${dir || "."}: ${(error as NodeJS.ErrnoException).code ?? error}`);
    return undefined;
  }
}
