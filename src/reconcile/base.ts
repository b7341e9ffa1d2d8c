import { normalizeApiUrl } from "../config/config.js";
import { mergedMirror, type MirrorPoint } from "./mirror.js";

/**
 * The base (docs/sync.md#the-base): per project (API URL, project id, prefix), what this machine last saw
 * both sides agree on, path by path, with the stat it had here then (so a scan hashes only what
 * changed), the open conflicts, the deletes the mass-delete guard holds, and the remote version.
 * This file is the pure half: the shape of `.uspark/state.json` and its parsing. Reading and
 * writing it is state-store.ts. The token is never part of it.
 */

export interface BaseEntry {
  sha256: string;
  size: number;
  /** -1: not to be trusted (written too close to when it was read, or from an old state file): hash again. */
  mtimeMs: number;
  ino: number;
  /** The rest of the stat git keeps (base-keeper.ts LocalStat); absent when read from an older state file. */
  ctimeMs?: number;
  dev?: number;
  mode?: number;
}

/** A conflict kept open until the two sides are made equal or one is forced (docs/sync.md#conflicts). */
export interface OpenConflict {
  /** The local version when the conflict was found (its copy holds the latest, `copySha`). */
  local: string;
  /** The remote version then (`null`: deleted). */
  remote: string | null;
  /** The conflict copy's remote path; absent until a command that writes commits it (a pull never does). */
  copy?: string;
  /** What the copy holds: the last local version committed there. */
  copySha?: string;
  /** ISO time it was found. */
  at: string;
}

export interface Base {
  apiUrl: string;
  projectId: string;
  /** `--prefix`, `/`-separated, "" for none. */
  prefix: string;
  /** The remote version the base was last brought up to. */
  version: number;
  /**
   * The server's chain hash at `version` (API v1.3, docs/api.md), when it told it: a server whose
   * history does not extend (version, chain) is refused (src/reconcile/lineage.ts).
   */
  chain?: string;
  /** Set (never stored) when this process took the server's history as it is (push --onto-rewound): its version and chain replace the stored ones. */
  historyTaken?: true;
  files: Map<string, BaseEntry>;
  conflicts: Map<string, OpenConflict>;
  /** Deletes the mass-delete guard refused: they stay refused until `--force`. */
  held: Set<string>;
  /**
   * What this machine's commits sent per path (`null`: a delete) and heard no answer for (a lost
   * answer, a flush timeout, a crash): when the remote holds it, the commit went through and it is
   * the base (else a later edit here would be a conflict with our own commit).
   */
  sent?: Map<string, string | null>;
  /** Where the remote held exactly `files` (mirror.ts), as the state file last said. */
  mirror?: MirrorPoint;
  /** ISO time of the last save (when read from the file). */
  updatedAt?: string;
  /** The state file's mtime when it was read (the file system's clock): stats not older are not trusted. */
  savedMtimeMs?: number;
}

export interface BaseKey {
  apiUrl: string;
  projectId: string;
  prefix?: string;
}

export function emptyBase(key: BaseKey): Base {
  return {
    apiUrl: normalizeApiUrl(key.apiUrl),
    projectId: key.projectId,
    prefix: key.prefix ?? "",
    version: 0,
    files: new Map(),
    conflicts: new Map(),
    held: new Set(),
  };
}

const FORMAT = 2;

/** A file entry as stored: `[sha256, size, mtimeMs, ino, ctimeMs, dev, mode]`, or its first four of before (50,000 of them must stay small). */
type StoredEntry = [string, number, number, number] | [string, number, number, number, number, number, number];

interface StoredProject {
  apiUrl: string;
  projectId: string;
  prefix?: string;
  version: number;
  /** The chain hash at `version` (v1.3 servers). */
  chain?: string;
  updatedAt: string;
  /** Format 2: `[sha, size, mtimeMs, ino]`; format 1: the sha alone. */
  files: Record<string, StoredEntry | string>;
  conflicts?: Record<string, OpenConflict>;
  held?: string[];
  sent?: Record<string, string | null>;
  /** `[version, chain hash]`: the remote held exactly `files` there (mirror.ts). */
  mirror?: [number, string];
}

export interface StateFile {
  format: 1 | 2;
  projects: StoredProject[];
}

/** Parses state.json (format 2, or format 1 of v0.2); throws with a reason when it is not one we wrote. */
export function parseState(text: string): StateFile {
  const data: unknown = JSON.parse(text);
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
  const file = data as Partial<StateFile>;
  if (file.format !== 1 && file.format !== FORMAT) throw new Error(`unknown state format ${JSON.stringify(file.format)}`);
  if (!Array.isArray(file.projects)) throw new Error("projects is not an array");
  file.projects.forEach((project, i) => {
    const why = storedProjectProblem(project);
    if (why) throw new Error(`projects[${i}]: ${why}`);
  });
  return file as StateFile;
}

function storedProjectProblem(p: Partial<StoredProject> | null): string | undefined {
  if (!p || typeof p.apiUrl !== "string" || typeof p.projectId !== "string" || !Number.isInteger(p.version))
    return "not { apiUrl, projectId, version, files }";
  if (!isRecord(p.files)) return "files is not an object";
  // for…in, not Object.values: 50,000 files are 50,000 entries, not an array of them as well.
  for (const path in p.files) {
    const value = p.files[path];
    if (typeof value !== "string" && !isStoredEntry(value)) return "a file entry is not [sha256, size, mtimeMs, ino]";
  }
  if (p.prefix !== undefined && typeof p.prefix !== "string") return "prefix is not a string";
  if (p.chain !== undefined && typeof p.chain !== "string") return "chain is not a string";
  if (
    p.mirror !== undefined &&
    !(Array.isArray(p.mirror) && p.mirror.length === 2 && Number.isInteger(p.mirror[0]) && typeof p.mirror[1] === "string")
  )
    return "mirror is not [version, chain]";
  if (p.conflicts !== undefined && !isRecord(p.conflicts)) return "conflicts is not an object";
  if (p.held !== undefined && !(Array.isArray(p.held) && p.held.every((h) => typeof h === "string"))) return "held is not a list of paths";
  if (p.sent !== undefined && !(isRecord(p.sent) && Object.values(p.sent).every((v) => v === null || typeof v === "string")))
    return "sent is not an object of hashes";
  return undefined;
}

function isStoredEntry(value: unknown): value is StoredEntry {
  if (!Array.isArray(value) || (value.length !== 4 && value.length !== 7) || typeof value[0] !== "string") return false;
  // An index loop, not slice().every(): 50,000 entries must not make 50,000 arrays more to check them.
  for (let i = 1; i < value.length; i++) if (typeof value[i] !== "number") return false;
  return true;
}

function entryOf(value: StoredEntry): BaseEntry {
  const [sha256, size, mtimeMs, ino, ctimeMs, dev, mode] = value;
  return ctimeMs === undefined ? { sha256, size, mtimeMs, ino } : { sha256, size, mtimeMs, ino, ctimeMs, dev, mode };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function matches(stored: StoredProject, key: BaseKey, anyPrefix: boolean): boolean {
  return (
    normalizeApiUrl(stored.apiUrl) === normalizeApiUrl(key.apiUrl) &&
    stored.projectId === key.projectId &&
    (anyPrefix || (stored.prefix ?? "") === (key.prefix ?? ""))
  );
}

/** This project's base in a parsed state file; a v0.2 entry (no prefix recorded) counts for any prefix. */
export function baseIn(state: StateFile, key: BaseKey): Base | undefined {
  const stored =
    state.projects.find((p) => matches(p, key, false)) ?? state.projects.find((p) => p.prefix === undefined && matches(p, key, true));
  if (!stored) return undefined;
  const files = new Map<string, BaseEntry>();
  for (const path in stored.files) {
    const value = stored.files[path]!;
    files.set(path, typeof value === "string" ? { sha256: value, size: -1, mtimeMs: -1, ino: -1 } : entryOf(value));
  }
  return {
    apiUrl: normalizeApiUrl(stored.apiUrl),
    projectId: stored.projectId,
    prefix: key.prefix ?? "",
    version: stored.version,
    ...(stored.chain === undefined ? {} : { chain: stored.chain }),
    ...(stored.mirror === undefined ? {} : { mirror: { version: stored.mirror[0], chain: stored.mirror[1] } }),
    files,
    conflicts: new Map(Object.entries(stored.conflicts ?? {})),
    held: new Set(stored.held ?? []),
    sent: new Map(Object.entries(stored.sent ?? {})),
    updatedAt: stored.updatedAt,
  };
}

/** The state file with one project's base replaced (the others kept, the newest last). */
export function withBase(state: StateFile | undefined, base: Base, now: Date): StateFile {
  const others = (state?.projects ?? []).filter((p) => !matches(p, base, false) && !(p.prefix === undefined && matches(p, base, true)));
  const files: Record<string, StoredEntry> = {};
  for (const path of [...base.files.keys()].sort()) {
    const e = base.files.get(path)!;
    files[path] =
      e.ctimeMs === undefined || e.dev === undefined || e.mode === undefined
        ? [e.sha256, e.size, e.mtimeMs, e.ino]
        : [e.sha256, e.size, e.mtimeMs, e.ino, e.ctimeMs, e.dev, e.mode];
  }
  const stored: StoredProject = {
    apiUrl: normalizeApiUrl(base.apiUrl),
    projectId: base.projectId,
    prefix: base.prefix,
    version: base.version,
    updatedAt: now.toISOString(),
    files,
  };
  if (base.conflicts.size > 0) stored.conflicts = Object.fromEntries(base.conflicts);
  if (base.held.size > 0) stored.held = [...base.held].sort();
  if (base.sent && base.sent.size > 0) stored.sent = Object.fromEntries(base.sent);
  if (base.chain !== undefined) stored.chain = base.chain;
  if (base.mirror !== undefined) stored.mirror = [base.mirror.version, base.mirror.chain];
  return { format: FORMAT, projects: [...others, stored] };
}

/** The project this root was last synced with (the newest entry): what commands use when no flag names one. */
export function lastProject(state: StateFile): BaseKey | undefined {
  const newest = [...state.projects].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt)).at(-1);
  return newest && { apiUrl: newest.apiUrl, projectId: newest.projectId, prefix: newest.prefix ?? "" };
}

/**
 * `mine`'s entries for `paths` (files, conflicts, held deletes, sent commits: set, or removed
 * where mine has none) over `stored`, the base as another process may have written it since this
 * one read it; the version the higher of the two. What a save writes: its own changes, never a
 * whole snapshot over someone else's.
 */
export function mergeBase(stored: Base | undefined, mine: Base, paths: Iterable<string>): Base {
  const into: Base = stored
    ? {
        ...stored,
        files: new Map(stored.files),
        conflicts: new Map(stored.conflicts),
        held: new Set(stored.held),
        sent: new Map(stored.sent ?? []),
      }
    : { ...emptyBase(mine), sent: new Map() };
  // The version and the chain hash at it go together: the newer one, or a history taken on purpose.
  if (mine.historyTaken || mine.version > into.version || (mine.version === into.version && into.chain === undefined)) {
    into.version = mine.version;
    if (mine.chain === undefined) delete into.chain;
    else into.chain = mine.chain;
  }
  const move = <V>(from: Map<string, V> | undefined, to: Map<string, V>, path: string) =>
    from?.has(path) ? to.set(path, from.get(path)!) : to.delete(path);
  for (const path of paths) {
    move(mine.files, into.files, path);
    move(mine.conflicts, into.conflicts, path);
    move(mine.sent, into.sent!, path);
    if (mine.held.has(path)) into.held.add(path);
    else into.held.delete(path);
  }
  const mirror = mergedMirror(into.files, [mine, ...(stored ? [stored] : [])]);
  if (mirror === undefined) delete into.mirror;
  else into.mirror = mirror;
  return into;
}
