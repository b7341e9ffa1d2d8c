import { lstatSync, type FSWatcher, type Stats } from "node:fs";
import path from "node:path";
import { errorCode, errorText } from "../errors/text.js";

/**
 * The tree of watched directories, as last seen. A directory is known by its place in the tree,
 * not by its inode: `rm -rf d && mkdir d` may give the new `d` the old inode, so an event on a
 * known directory's name always re-lists it (see TreeWatcher.checkEntry).
 */
export interface DirNode {
  readonly name: string;
  readonly parent: DirNode | undefined;
  /** Relative to the root, `/`-separated; "" for the root. */
  readonly rel: string;
  readonly abs: string;
  /** When its last listing started (epoch ms): a file unchanged since has an older ctime. */
  listedAt: number;
  /** Regular files by name → what lstat said of them, or null when only listed. */
  readonly files: Map<string, FileSig | null>;
  readonly dirs: Map<string, DirNode>;
  watcher: FSWatcher | undefined;
  polled: boolean;
  removed: boolean;
}

/** What tells a file changed. */
export interface FileSig {
  mtimeMs: number;
  ctimeMs: number;
  size: number;
  ino: number;
}

/**
 * How far a file's ctime may lag behind the clock that stamped a listing: file times come from a
 * coarse kernel clock (one tick, up to 10 ms). A margin too wide only re-reports an unchanged file,
 * which the sync skips by hash.
 */
const CTIME_SLACK_MS = 50;

export function makeNode(parent: DirNode | undefined, name: string, abs: string): DirNode {
  return {
    name,
    parent,
    rel: parent === undefined ? "" : parent.rel === "" ? name : `${parent.rel}/${name}`,
    abs,
    listedAt: 0,
    files: new Map(),
    dirs: new Map(),
    watcher: undefined,
    polled: false,
    removed: false,
  };
}

export function addChild(parent: DirNode, name: string): DirNode {
  const node = makeNode(parent, name, childPath(parent, name));
  parent.dirs.set(name, node);
  return node;
}

export function forEachNode(node: DirNode, visit: (node: DirNode) => void): void {
  const stack = [node];
  while (stack.length > 0) {
    const next = stack.pop()!;
    visit(next);
    for (const child of next.dirs.values()) stack.push(child);
  }
}

/** The known directory at `rel` ("" for the root), if it is watched. */
export function findNode(root: DirNode, rel: string): DirNode | undefined {
  let node: DirNode | undefined = root;
  if (rel !== "") for (const name of rel.split("/")) node = node?.dirs.get(name);
  return node;
}

/** `node.abs` is normalised and a name has no separator: no need for path.join. */
export function childPath(node: DirNode, name: string): string {
  return node.abs.endsWith(path.sep) ? node.abs + name : node.abs + path.sep + name;
}

export function signature(st: Stats): FileSig {
  return { mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, size: st.size, ino: st.ino };
}

/**
 * Has the file changed since the watcher last saw it? A file only listed (no stat then) has
 * changed when its ctime is not older than that listing: any write, rename or chmod sets ctime.
 */
export function changedSince(before: FileSig | null | undefined, st: Stats, listedAt: number): boolean {
  if (before === undefined) return true;
  if (before === null) return st.ctimeMs >= listedAt - CTIME_SLACK_MS;
  return before.mtimeMs !== st.mtimeMs || before.ctimeMs !== st.ctimeMs || before.size !== st.size || before.ino !== st.ino;
}

/** The stats of an entry; null when it does not exist; undefined when that cannot be told. */
export function probe(abs: string | Buffer): Stats | null | undefined {
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    return isGone(error) ? null : undefined;
  }
}

export { errorCode };

export function isGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

export function describeError(error: unknown): string {
  const code = errorCode(error);
  const message = errorText(error);
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return code && !message.startsWith(code) ? `${code}: ${message}` : message;
}
