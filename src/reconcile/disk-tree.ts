import { lstatSync, promises as fsp } from "node:fs";
import path from "node:path";
import type { IgnoreEngine } from "../ignore/engine.js";
import type { Reporter } from "../report/reporter.js";
import { MAX_PATH_BYTES, validateProjectPath } from "../api/validate.js";
import { Breath } from "../util/breath.js";
import { ensureDir, stateDirPath } from "../state/state-dir.js";
import { ownTempDir } from "../state/own-temps.js";
import { readLocal } from "./local-read.js";
import { joinAbs, joinRel, walkFiles } from "./walk.js";
import { NOT_UTF8 } from "../paths/names.js";
import { describeRule } from "../ignore/pattern.js";
import { removeEmptiedParents, removeUnchanged, syncDirectories, writeAtomic } from "./disk-write.js";
import {
  stillAsPlanned,
  type LocalExpectation,
  type LocalRead,
  type LocalStat,
  type LocalTree,
  type TreeListing,
  type Unrepresentable,
} from "./local-tree.js";
import { localStatOf } from "./base-keeper.js";

/**
 * The local tree on the disk: `<root>/<prefix>/<project path>`. Listing walks with the session's
 * one ignore engine (built-ins, .gitignore files, --ignore) and never follows a symlink, so what
 * it lists is inside the root by construction: no realpath per file. Reads check the descriptor's
 * real path (local-read.ts); writes go through disk-write.ts.
 */

export interface DiskTreeOptions {
  /** The real path of the project root. */
  root: string;
  prefix?: string;
  ignore: IgnoreEngine;
  maxFileSize: number;
  report?: Reporter;
}

/** Never written or listed, whatever the rules say (case-insensitive: `.GIT/` is `.git/` on macOS). */
const RESERVED = /(?:^|\/)(\.git|\.uspark)(?:\/|$)/i;

export class DiskTree implements LocalTree {
  /** The directory the project's paths are under: the root, or `<root>/<prefix>`. */
  readonly dir: string;
  private readonly prefix: string;
  /** Directories where files were renamed in or unlinked since the last flushDirectories. */
  private readonly touchedDirs = new Set<string>();
  private readonly breath = new Breath();
  /** `.uspark/tmp`, made at the first write. */
  private tempDir: Promise<string> | undefined;

  constructor(private readonly options: DiskTreeOptions) {
    this.prefix = (options.prefix ?? "")
      .split(/[\\/]+/)
      .filter((s) => s !== "" && s !== ".")
      .join("/");
    this.dir = this.prefix ? path.join(options.root, ...this.prefix.split("/")) : options.root;
  }

  where(p: string): string {
    return path.join(this.dir, ...p.split("/"));
  }

  async list(signal?: AbortSignal): Promise<TreeListing> {
    const { root, ignore, report } = this.options;
    return listTree(root, this.dir, this.prefix, ignore, report, signal);
  }

  async stat(p: string): Promise<LocalStat | "other" | undefined> {
    const stat = await fsp.lstat(this.where(p)).catch(() => undefined);
    if (!stat || stat.isDirectory()) return undefined;
    return stat.isFile() ? localStatOf(stat) : "other";
  }

  async read(p: string, keepBytesUpTo = 0): Promise<LocalRead> {
    await this.breath.take(); // a small file is read in place: a batch of them must not hold stdin long
    const { root, maxFileSize } = this.options;
    const read = await readLocal(this.where(p), { root, maxFileSize, keepBytesUpTo });
    if (read.kind !== "file") return read;
    return { kind: "file", sha256: read.sha256, size: read.size, stat: read.stat, bytes: read.bytes };
  }

  outOfScope(p: string): { reason: string; refused: boolean } | undefined {
    const why = pathRefusal(p);
    if (why) return { reason: why, refused: true };
    const rule = this.options.ignore.check(this.prefix ? `${this.prefix}/${p}` : p, false);
    return rule ? { reason: `ignored by ${describeRule(rule)}`, refused: false } : undefined;
  }

  async write(p: string, bytes: Uint8Array, expected: LocalExpectation): Promise<LocalStat> {
    const abs = this.where(p);
    this.tempDir ??= ownTempDir(this.options.root);
    await writeAtomic(this.options.root, abs, bytes, this.unchanged(p, expected), await this.tempDir);
    this.touchedDirs.add(path.dirname(abs));
    return localStatOf(await fsp.lstat(abs));
  }

  async remove(p: string, expected: LocalExpectation): Promise<void> {
    const abs = this.where(p);
    await removeUnchanged(abs, this.unchanged(p, expected));
    this.touchedDirs.add(await removeEmptiedParents(this.dir, abs));
  }

  async backup(p: string, label: string): Promise<string> {
    const { root } = this.options;
    const backupRoot = path.join(await ensureDir(root), "backup");
    await fsp.mkdir(backupRoot, { recursive: false }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    const target = path.join(backupRoot, label, ...p.split("/"));
    await writeAtomic(stateDirPath(root), target, await fsp.readFile(this.where(p)), async () => true);
    return target;
  }

  /** Makes the renames and unlinks done so far durable (one fsync per directory). */
  async flushDirectories(): Promise<void> {
    const dirs = [...this.touchedDirs];
    this.touchedDirs.clear();
    await syncDirectories(dirs);
  }

  /** The check made right before a rename or unlink: is the local file still what was planned on? */
  private unchanged(p: string, expected: LocalExpectation): () => Promise<boolean> {
    const abs = this.where(p);
    return async () => {
      const now = await fsp.lstat(abs).catch(() => undefined);
      // Anything in the way that is not a regular file is not what was planned on either.
      if (now !== undefined && !now.isFile()) return false;
      return stillAsPlanned(expected, now !== undefined, async () => {
        const read = await readLocal(abs, { root: this.options.root, maxFileSize: Number.MAX_SAFE_INTEGER });
        return read.kind === "file" ? read.sha256 : undefined;
      });
    };
  }
}

/** Why a project path may never be written or synced here, by its name alone; undefined when it may. */
export function pathRefusal(p: string): string | undefined {
  const invalid = validateProjectPath(p);
  if (invalid) return invalid;
  const reserved = RESERVED.exec(p)?.[1];
  return reserved ? `it is inside ${reserved}/, which is never written` : undefined;
}

/** Why the API cannot hold this path, in the user's words; undefined when it can. */
export function unrepresentableFile(remote: string): { remote: string; reason: string } | undefined {
  const invalid = validateProjectPath(remote);
  if (invalid === undefined) return undefined;
  if (Buffer.byteLength(remote) > MAX_PATH_BYTES)
    return { remote, reason: `a path over ${MAX_PATH_BYTES} bytes cannot be stored remotely` };
  if (remote.includes("\\")) return { remote, reason: "a backslash in the name cannot be stored remotely" };
  return { remote, reason: `${invalid}: it cannot be stored remotely` };
}

async function listTree(
  root: string,
  dir: string,
  prefix: string,
  ignore: IgnoreEngine,
  report: Reporter | undefined,
  signal?: AbortSignal,
): Promise<TreeListing> {
  const files = new Map<string, LocalStat>();
  const unrepresentable: Unrepresentable[] = [];
  if (!(await fsp.lstat(dir).catch(() => undefined))?.isDirectory()) return { files, unrepresentable };
  const strip = prefix === "" ? 0 : prefix.length + 1;
  const onUnsyncable = (rel: string, key: string) => unrepresentable.push({ remote: rel.slice(strip), reason: NOT_UTF8, key });
  for await (const run of walkFiles({ root, start: dir, ignoreEngine: ignore, report, onUnsyncable, signal })) {
    signal?.throwIfAborted();
    // Stats synchronously: a thread pool round trip per file costs several times the lstat itself
    // (50,000 files: 0.3 s against 2 s); the walk gives the event loop its turns.
    for (const name of run.names) {
      const file = joinAbs(run.dir, name);
      const remote = joinRel(run.rel, name).slice(strip);
      const why = unrepresentableFile(remote);
      if (why) {
        unrepresentable.push({ ...why, key: file });
        continue;
      }
      const stat = lstatSync(file, { throwIfNoEntry: false });
      if (stat?.isFile()) files.set(remote, localStatOf(stat));
    }
  }
  return { files, unrepresentable };
}
