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
}

/** Yields the absolute paths of the files, depth first, in name order. */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<string> {
  const root = options.root;
  const start = options.start ?? root;
  if (!isInside(root, start)) throw new Error(`${start} is outside the project root ${root}`);
  const engine = options.ignoreEngine ?? new IgnoreEngine({ root, ignore: options.ignore });
  /** A new engine reads every rule file as it is now; a shared one is brought up to date as the walk goes. */
  const refresh = options.ignoreEngine !== undefined;
  const startRel = path.relative(root, start).split(path.sep).join("/");
  if (startRel !== "" && engine.check(startRel, true, { fresh: true })) return;
  yield* walk(startRel);

  async function* walk(dir: string): AsyncGenerator<string> {
    let entries: Dirent<Buffer>[];
    try {
      entries = await fsp.readdir(path.join(root, dir), { withFileTypes: true, encoding: "buffer" });
    } catch (error) {
      options.report?.warn("walk", `cannot read directory ${dir || "."}: ${(error as NodeJS.ErrnoException).code ?? error}`);
      return;
    }
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    // A fresh check of a path in `dir` re-reads the rule files on its way whose stat changed (the
    // engine says so to its listeners, as when the watcher sees the change); its answer is not needed.
    if (refresh) engine.check(dir === "" ? ".gitignore" : `${dir}/.gitignore`, false, { fresh: true });
    for (const entry of entries) {
      const isDir = entry.isDirectory();
      if (!isDir && !entry.isFile() && !entry.isSymbolicLink()) continue;
      const name = utf8Name(entry.name);
      if (name.valid === false) {
        const rel = dir === "" ? name.escaped : `${dir}/${name.escaped}`;
        if (!engine.checkEntry(dir, name.escaped, isDir)) unsyncable(isDir ? `${rel}/` : rel);
        continue;
      }
      const rel = dir === "" ? name.name : `${dir}/${name.name}`;
      if (entry.isSymbolicLink()) {
        options.report?.debug("walk", `not followed: ${rel} is a symlink`, { path: rel });
        continue;
      }
      if (engine.checkEntry(dir, name.name, isDir)) continue;
      if (isDir) yield* walk(rel);
      else yield path.join(root, ...rel.split("/"));
    }
  }

  function unsyncable(rel: string): void {
    options.onUnsyncable?.(rel, warnNotUtf8(options.report, root, rel));
  }
}
