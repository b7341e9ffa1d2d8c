import type { Stats } from "node:fs";
import { isSha256, parseCommitRequest } from "../api/validate.js";
import type { Change, CommitSource } from "../api/types.js";
import { normalizeApiUrl } from "../config/config.js";
import type { Reporter } from "../report/reporter.js";
import { listStateFiles, readStateFile, removeStateFile, stateFilePath, stateFileStat, writeStateFile } from "../state/state-dir.js";
import { processGone, thisBoot, withLock } from "../state/state-lock.js";
import { baseIn, lastProject, mergeBase, parseState, withBase, type Base, type BaseKey, type StateFile } from "./base.js";
import { errorText } from "../errors/text.js";

/**
 * Where a base is kept between sessions. The real one is `<root>/.uspark/state.json`, changed
 * path by path under its lock (re-read, merged, written atomically, through state-dir.ts, which
 * refuses symlinks), so that processes sharing a tree keep each other's entries; and an intent
 * file per commit in flight. The simulation keeps them in memory and loses what was not durable
 * yet, as a crash would.
 */
export interface StateStore {
  load(key: BaseKey): Promise<Base | undefined>;
  /** Writes `base`'s entries for `paths` over the stored base; resolves to the saved file's mtime (the file system's clock) when it can tell. */
  save(base: Base, paths: ReadonlySet<string>): Promise<number | void>;
  /** Makes the intent durable: resolves only once a crash cannot lose it. */
  writeIntent(intent: Intent): Promise<void>;
  removeIntent(key: string): Promise<void>;
  /** The project's intents whose process is gone (a live one's are its own). */
  openIntents(project: BaseKey): Promise<Intent[]>;
}

/**
 * A commit about to be sent (write-ahead): its Idempotency-Key, so that a replay returns the
 * first answer, and its body. `copies`: the changes that are conflict copies, not base paths;
 * `bases`: the base of each other path then (`null`: none), so that an answer moves only a base
 * that has not moved since.
 */
export interface Intent {
  key: string;
  project: BaseKey;
  source: CommitSource;
  changes: Change[];
  copies: string[];
  bases: Record<string, string | null>;
}

const INTENT_PREFIX = "intent-";

export const STATE_NAME = "state.json";

export function statePath(root: string): string {
  return stateFilePath(root, STATE_NAME);
}

/** state.json under `root`. A corrupt or foreign file is one warning and "no base", never a crash. */
export function fileStateStore(root: string, report?: Reporter): StateStore {
  let written: WrittenState | undefined;
  return {
    async load(key) {
      const state = await readState(root, report);
      const base = state && baseIn(state, key);
      const stat = base && (await stateFileStat(root, STATE_NAME));
      if (base && stat) base.savedMtimeMs = stat.mtimeMs;
      return base;
    },
    async save(base, paths) {
      return withLock(root, STATE_NAME, async () => {
        // Our own last write, untouched since (a writer renames a new file in: a new inode): no re-read of 50,000 entries.
        const ours =
          written && sameFile(written.stat, await stateFileStat(root, STATE_NAME)) && sameProject(written.base, base) ? written : undefined;
        const state = ours ? ours.state : await readState(root);
        const merged = mergeBase(ours ? ours.base : state && baseIn(state, base), base, paths);
        const next = withBase(state, merged, new Date());
        written = undefined;
        await writeStateFile(root, STATE_NAME, JSON.stringify(next) + "\n");
        const stat = await stateFileStat(root, STATE_NAME);
        if (stat) written = { stat, state: next, base: merged };
        return stat?.mtimeMs;
      });
    },
    async writeIntent(intent) {
      const owner: IntentOwner = { pid: process.pid, boot: thisBoot() };
      await writeStateFile(root, `${INTENT_PREFIX}${safeName(intent.key)}.json`, JSON.stringify({ ...intent, owner }) + "\n");
    },
    async removeIntent(key) {
      await removeStateFile(root, `${INTENT_PREFIX}${safeName(key)}.json`);
    },
    async openIntents(project) {
      const open: Intent[] = [];
      for (const name of await listStateFiles(root, INTENT_PREFIX)) {
        if (!name.endsWith(".json")) continue; // a temp file of a write cut short
        const stored = await readIntent(root, name);
        if (stored && processGone(stored.owner.pid, stored.owner.boot) && sameProject(stored.project, project)) open.push(stored);
      }
      return open;
    },
  };
}

/** What this store wrote last: the file's stat then, and what it holds. */
interface WrittenState {
  stat: Stats;
  state: StateFile;
  base: Base;
}

function sameFile(a: Stats, b: Stats | undefined): boolean {
  return b !== undefined && a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

interface IntentOwner {
  pid: number;
  boot: string;
}

/** An Idempotency-Key as a file name: ours are UUIDs; anything else is hex-escaped. */
function safeName(key: string): string {
  return /^[A-Za-z0-9-]{1,100}$/.test(key) ? key : Buffer.from(key).toString("hex").slice(0, 200);
}

function sameProject(a: BaseKey, b: BaseKey): boolean {
  return normalizeApiUrl(a.apiUrl) === normalizeApiUrl(b.apiUrl) && a.projectId === b.projectId && (a.prefix ?? "") === (b.prefix ?? "");
}

/**
 * An intent file, or undefined when it is not one (garbled: written by no one we know). Its
 * changes pass the server's own check of a commit (a `[null]` crashed every start, a bad hash was
 * replayed), its bases and copies are what a base holds.
 */
async function readIntent(root: string, name: string): Promise<(Intent & { owner: IntentOwner }) | undefined> {
  try {
    const data = JSON.parse((await readStateFile(root, name)) ?? "") as Intent & { owner: IntentOwner };
    const bases = typeof data.bases === "object" && data.bases !== null ? Object.values(data.bases) : undefined;
    const valid =
      typeof data.key === "string" &&
      parseCommitRequest({ changes: data.changes }).ok &&
      Array.isArray(data.copies) &&
      data.copies.every((copy) => typeof copy === "string") &&
      bases?.every((sha) => sha === null || isSha256(sha)) === true &&
      typeof data.project?.apiUrl === "string" &&
      Number.isInteger(data.owner?.pid) &&
      typeof data.owner.boot === "string";
    return valid ? data : undefined;
  } catch {
    return undefined;
  }
}

/** The project `root` was last synced with, as its state file says (undefined: none, or unreadable). */
export async function rememberedProject(root: string): Promise<BaseKey | undefined> {
  const state = await readState(root);
  return state && lastProject(state);
}

async function readState(root: string, report?: Reporter): Promise<StateFile | undefined> {
  let text: string | undefined;
  try {
    text = await readStateFile(root, STATE_NAME);
  } catch (error) {
    report?.warn("state-unreadable", `cannot read ${statePath(root)}: ${errorText(error)}; starting without a base`);
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    return parseState(text);
  } catch (error) {
    report?.warn("state-corrupt", `${statePath(root)} is not a state file uspark can use (${errorText(error)}); starting without a base`);
    return undefined;
  }
}
