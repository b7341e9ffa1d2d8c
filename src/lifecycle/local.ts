import { promises as fsp } from "node:fs";
import path from "node:path";
import { readLocal, type FileSnapshot } from "../sync/files.js";
import { mapLimit } from "../map-limit.js";
import type { LocalState } from "./plan.js";
import { parentProblem } from "./write.js";

/**
 * The local side of a pull: the state of each named file under the root (not the whole tree).
 * Symlinks are never followed: one at the path or at any directory above it blocks the path.
 */

export type LocalEntry = LocalState & { stat?: FileSnapshot };

const HASH_CONCURRENCY = 8;

/** `rel` is a valid project path; `dir` the local directory it lives under (root or root/prefix). */
export async function snapshotLocal(root: string, dir: string, rels: Iterable<string>): Promise<Map<string, LocalEntry>> {
  const unique = [...new Set(rels)];
  const states = await mapLimit(unique, HASH_CONCURRENCY, (rel) => localState(root, path.join(dir, ...rel.split("/"))));
  return new Map(unique.map((rel, i) => [rel, states[i]!]));
}

async function localState(root: string, abs: string): Promise<LocalEntry> {
  const above = await parentProblem(root, abs);
  if (above) return above === "missing" ? { kind: "missing" } : { kind: "blocked", reason: above };
  let stat;
  try {
    stat = await fsp.lstat(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? { kind: "missing" } : { kind: "blocked", reason: `cannot look at it here (${code})` };
  }
  if (stat.isSymbolicLink()) return { kind: "blocked", reason: "it is a symlink here (symlinks are never written through)" };
  if (stat.isDirectory()) return { kind: "blocked", reason: "a directory is in its place here" };
  if (!stat.isFile()) return { kind: "blocked", reason: "it is not a regular file here" };
  const read = await readLocal(abs, { root, maxFileSize: Number.MAX_SAFE_INTEGER });
  if (read.kind === "file") return { kind: "file", sha256: read.sha256, stat: read.stat };
  if (read.kind === "missing") return { kind: "missing" };
  return { kind: "blocked", reason: read.kind === "refused" || read.kind === "error" ? read.reason : "it changed while it was read" };
}
