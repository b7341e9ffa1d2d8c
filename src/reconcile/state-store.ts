import type { Reporter } from "../report.js";
import { readStateFile, stateFilePath, stateFileStat, withLock, writeStateFile } from "../state-dir.js";
import { baseIn, lastProject, parseState, withBase, type Base, type BaseKey, type StateFile } from "./base.js";

/**
 * Where a base is kept between sessions. The real one is `<root>/.uspark/state.json`, written
 * atomically under its lock (through state-dir.ts, which refuses symlinks); the simulation keeps
 * it in memory and can lose what was not saved yet, as a crash would.
 */
export interface StateStore {
  load(key: BaseKey): Promise<Base | undefined>;
  /** Resolves to the saved file's mtime (the file system's clock) when it can tell. */
  save(base: Base): Promise<number | void>;
}

export const STATE_NAME = "state.json";

export function statePath(root: string): string {
  return stateFilePath(root, STATE_NAME);
}

/** state.json under `root`. A corrupt or foreign file is one warning and "no base", never a crash. */
export function fileStateStore(root: string, report?: Reporter): StateStore {
  return {
    async load(key) {
      const state = await readState(root, report);
      const base = state && baseIn(state, key);
      const stat = base && (await stateFileStat(root, STATE_NAME));
      if (base && stat) base.savedMtimeMs = stat.mtimeMs;
      return base;
    },
    async save(base) {
      await withLock(root, STATE_NAME, async () => {
        const state = await readState(root);
        await writeStateFile(root, STATE_NAME, JSON.stringify(withBase(state, base, new Date())) + "\n");
      });
      return (await stateFileStat(root, STATE_NAME))?.mtimeMs;
    },
  };
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
