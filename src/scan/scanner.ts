import { promises as fsp } from "node:fs";
import path from "node:path";
import { NOT_UTF8 } from "../fswatch/names.js";
import type { PathDecision, PathPolicy } from "../paths.js";
import type { Reporter } from "../report.js";
import { MAX_PATH_BYTES, validateProjectPath } from "../server/validate.js";
import { mapLimit } from "../map-limit.js";
import { readLocal } from "../sync/files.js";
import { walkFiles } from "../sync/walk.js";
import { diffTree, renameCandidates, type DiffBase, type SnapshotEntry } from "./diff.js";

/**
 * The I/O half of a scan: walk the tree (the same walk and ignore rules as `push`), stat every
 * file, hash only what the base knows and only when its size, mtime or inode moved since the
 * last scan of this session (periodic rescans of a quiet tree read no file), then diff.
 */

const CHUNK = 256;
const CONCURRENCY = 16;

export interface ScanTarget {
  remote: string;
  abs: string;
  kind: "write" | "delete";
}

export interface ScanResult {
  targets: ScanTarget[];
  /**
   * In-root files the API cannot represent (a backslash, a path too long, a name that is not
   * valid UTF-8): never synced. `abs` is what the warning about it is said once under: its path,
   * or for a name not UTF-8 its escaped path (see fswatch/names.ts `warnNotUtf8`).
   */
  unrepresentable: { remote: string; abs: string; reason: string }[];
  /** Files walked. */
  files: number;
  /** Files hashed (not answered by the cache). */
  hashed: number;
}

export interface ScannerOptions {
  /** The real path of the project root. */
  root: string;
  /** Its ignore engine decides what the walk leaves out (built-ins, .gitignore files, --ignore). */
  policy: PathPolicy;
  prefix?: string;
  maxFileSize: number;
  report: Reporter;
}

interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

export interface TreeScanner {
  scan(base: DiffBase): Promise<ScanResult>;
}

export function createTreeScanner(options: ScannerOptions): TreeScanner {
  const { root, policy } = options;
  const prefixDir = options.prefix ? path.join(root, ...options.prefix.split(/[\\/]+/).filter(Boolean)) : root;
  /** The prefix as the walk names paths: root-relative, `/`-separated ("" without one). */
  const prefixRel = path.relative(root, prefixDir).split(path.sep).join("/");
  /** Real path → what it was when last hashed, so an unchanged file is never read twice. */
  const hashes = new Map<string, Seen>();
  let hashed = 0;

  async function hashOf(abs: string, size: number, mtimeMs: number, ino: number): Promise<string | undefined> {
    const seen = hashes.get(abs);
    if (seen && seen.size === size && seen.mtimeMs === mtimeMs && seen.ino === ino) return seen.sha256;
    const read = await readLocal(abs, { root, maxFileSize: options.maxFileSize });
    hashed++;
    if (read.kind !== "file") return undefined; // unhashable: the engine reads it and says why
    hashes.set(abs, { ...read.stat, sha256: read.sha256 });
    return read.sha256;
  }

  /**
   * Walked path → the policy's answer. An accepted path stays accepted until the ignore rules
   * change, as in watcher.ts (the engine's read checks the real path of what it opens): rescans
   * skip the realpath.
   */
  const decisions = new Map<string, PathDecision>();
  policy.ignore.onRulesChanged(() => decisions.clear());
  const decide = (abs: string): PathDecision => {
    const known = decisions.get(abs);
    if (known) return known;
    const decision = policy.resolve(abs);
    if (decision.ok) decisions.set(abs, decision);
    return decision;
  };

  return {
    async scan(base) {
      const snapshot = new Map<string, SnapshotEntry>();
      const where = new Map<string, string>();
      const unrepresentable: ScanResult["unrepresentable"] = [];
      hashed = 0;

      const look = async (abs: string): Promise<void> => {
        const decision = decide(abs);
        if (!decision.ok) {
          // Only a name the API cannot hold counts here; anything else the policy refuses (a
          // directory swapped for a symlink mid-walk) is not a file of this tree.
          const remote = path.relative(prefixDir, abs).split(path.sep).join("/");
          const why = decision.severity === "warn" ? unrepresentableFile(remote) : undefined;
          if (why) unrepresentable.push({ ...why, abs });
          return;
        }
        const stat = await fsp.lstat(decision.abs).catch(() => undefined);
        if (!stat?.isFile()) return;
        const entry: SnapshotEntry = { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino };
        if (base.files.has(decision.remote)) entry.sha256 = await hashOf(decision.abs, stat.size, stat.mtimeMs, stat.ino);
        snapshot.set(decision.remote, entry);
        where.set(decision.remote, decision.abs);
      };

      // Relative to the root (the walk's), with a trailing "/" for a directory: nothing in it is walked.
      const onUnsyncable = (rel: string, key: string) => {
        const remote = prefixRel === "" ? rel : rel.slice(prefixRel.length + 1);
        unrepresentable.push({ remote, abs: key, reason: NOT_UTF8 });
      };

      if (await isDirectory(prefixDir)) {
        // In chunks, stat'ed and hashed in parallel; the awaits between them keep the agent's
        // output flowing while a large tree is scanned.
        let chunk: string[] = [];
        for await (const abs of walkFiles({ root, start: prefixDir, ignoreEngine: policy.ignore, report: options.report, onUnsyncable })) {
          chunk.push(abs);
          if (chunk.length < CHUNK) continue;
          await mapLimit(chunk, CONCURRENCY, look);
          chunk = [];
        }
        await mapLimit(chunk, CONCURRENCY, look);
      }
      // Only when a base file is gone from a tree the base does not fully know: read once a session (cached).
      await mapLimit(renameCandidates(snapshot, base), CONCURRENCY, async (remote) => {
        const entry = snapshot.get(remote)!;
        entry.sha256 = await hashOf(where.get(remote)!, entry.size, entry.mtimeMs, entry.ino!);
      });
      const targets: ScanTarget[] = [];
      for (const { remote, kind } of diffTree(snapshot, base)) {
        const abs = where.get(remote) ?? path.join(prefixDir, ...remote.split("/"));
        // Not walked is not gone: an ignored file (or one we may not read) is never a delete.
        if (kind === "delete" && (await exists(abs))) continue;
        targets.push({ remote, abs, kind });
      }
      return { targets, unrepresentable, files: snapshot.size, hashed };
    },
  };
}

/** Why the API cannot hold this path, in the user's words; undefined when it can. */
export function unrepresentableFile(remote: string): { remote: string; reason: string } | undefined {
  const invalid = validateProjectPath(remote);
  if (invalid === undefined) return undefined;
  if (Buffer.byteLength(remote) > MAX_PATH_BYTES) return { remote, reason: `a path over ${MAX_PATH_BYTES} bytes cannot be stored remotely` };
  if (remote.includes("\\")) return { remote, reason: "a backslash in the name cannot be stored remotely" };
  return { remote, reason: `${invalid}: it cannot be stored remotely` };
}

async function isDirectory(abs: string): Promise<boolean> {
  return (await fsp.lstat(abs).catch(() => undefined))?.isDirectory() === true;
}

async function exists(abs: string): Promise<boolean> {
  return (await fsp.lstat(abs).catch(() => undefined)) !== undefined;
}
