import type { Reporter } from "../report.js";
import { readStateFile, stateFilePath, withLock, writeStateFile } from "../state-dir.js";
import { normalizeApiUrl } from "./journal.js";

/**
 * The base: what this machine last pulled or synced, per API URL and project, kept in
 * `<root>/.uspark/state.json`: the remote version and `{ path: sha256 }`. A watch compares the
 * tree with it at start (what changed while nothing ran), `pull` with it to tell a local edit
 * from a stale file. The token is never written here. A corrupt or foreign file is one warning
 * and "no base", never a crash.
 */

export const STATE_NAME = "state.json";
const FORMAT = 1;

export interface Base {
  /** The remote project's version this base corresponds to. */
  version: number;
  /** Remote path → sha256 of its content. */
  files: Map<string, string>;
  /**
   * Only the paths a watch or push synced, not the whole project (no pull or base came first):
   * a local file missing from it is new only if written after `savedAt`.
   */
  partial?: true;
  /** When a partial base was written (ms since the epoch). */
  savedAt?: number;
}

interface StoredProject {
  apiUrl: string;
  projectId: string;
  version: number;
  files: Record<string, string>;
  partial?: true;
  updatedAt: string;
}

interface StateFile {
  format: typeof FORMAT;
  projects: StoredProject[];
}

export function statePath(root: string): string {
  return stateFilePath(root, STATE_NAME);
}

/** Parses state.json; throws with a reason when it is not one we wrote. */
export function parseState(text: string): StateFile {
  const data: unknown = JSON.parse(text);
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
  const file = data as Partial<StateFile>;
  if (file.format !== FORMAT) throw new Error(`unknown state format ${JSON.stringify(file.format)}`);
  if (!Array.isArray(file.projects)) throw new Error("projects is not an array");
  file.projects.forEach((p: Partial<StoredProject>, i) => {
    const ok =
      p && typeof p.apiUrl === "string" && typeof p.projectId === "string" && Number.isInteger(p.version) &&
      p.files && typeof p.files === "object" && !Array.isArray(p.files) && Object.values(p.files).every((sha) => typeof sha === "string");
    if (!ok) throw new Error(`projects[${i}] is not { apiUrl, projectId, version, files }`);
  });
  return file as StateFile;
}

function sameProject(stored: StoredProject, apiUrl: string, projectId: string): boolean {
  return normalizeApiUrl(stored.apiUrl) === normalizeApiUrl(apiUrl) && stored.projectId === projectId;
}

/** The base of one project in a parsed state file, if there is one. */
export function baseIn(state: StateFile, apiUrl: string, projectId: string): Base | undefined {
  const stored = state.projects.find((p) => sameProject(p, apiUrl, projectId));
  if (!stored) return undefined;
  const base: Base = { version: stored.version, files: new Map(Object.entries(stored.files)) };
  if (stored.partial) Object.assign(base, { partial: true, savedAt: Date.parse(stored.updatedAt) || 0 });
  return base;
}

/** The state file with one project's base replaced (others kept as they were). */
export function withBase(state: StateFile | undefined, apiUrl: string, projectId: string, base: Base, now = new Date()): StateFile {
  const others = (state?.projects ?? []).filter((p) => !sameProject(p, apiUrl, projectId));
  const files = Object.fromEntries([...base.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const stored: StoredProject = { apiUrl: normalizeApiUrl(apiUrl), projectId, version: base.version, files, updatedAt: now.toISOString() };
  if (base.partial) stored.partial = true;
  return { format: FORMAT, projects: [...others, stored] };
}

async function readState(root: string, report?: Reporter): Promise<StateFile | undefined> {
  let text: string | undefined;
  try {
    text = await readStateFile(root, STATE_NAME);
  } catch (error) {
    report?.warn("state-unreadable", `cannot read ${statePath(root)}: ${(error as Error).message}; starting without a base`);
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    return parseState(text);
  } catch (error) {
    report?.warn("state-corrupt", `${statePath(root)} is not a state file uspark can use (${(error as Error).message}); starting without a base`);
    return undefined;
  }
}

/** This project's base, or undefined (no state file, none for this project, or unusable: said once). */
export async function loadBase(root: string, apiUrl: string, projectId: string, report?: Reporter): Promise<Base | undefined> {
  const state = await readState(root, report);
  return state && baseIn(state, apiUrl, projectId);
}

/** Replaces this project's base, atomically and under the state file's lock. */
export async function saveBase(root: string, apiUrl: string, projectId: string, base: Base): Promise<void> {
  await withLock(root, STATE_NAME, async () => {
    const state = await readState(root);
    await writeStateFile(root, STATE_NAME, JSON.stringify(withBase(state, apiUrl, projectId, base)) + "\n");
  });
}
