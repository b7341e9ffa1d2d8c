import { lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { errorCode } from "../errors/text.js";
import { checkDir, ensureDir, StateDirError, stateDirPath, unlinkIfThere } from "./state-dir.js";
import { processGone } from "./state-lock.js";

// Our own temp files under `.uspark/` (docs/local-state.md): where they go, and the leftovers of a
// process that is gone, removed at the next start.

const TEMP_DIR = "tmp";
const OWN_TEMP = /^(\d+)-[0-9a-f]+\.tmp$/;
/** writeStateFile's temp beside its target: `<name>.<pid>-<hex>.tmp`. */
const STATE_TEMP = /^[^/]+\.(\d+)-[0-9a-f]{12}\.tmp$/;

/**
 * `.uspark/tmp`, made if need be (a real directory, never a symlink): where a pulled file is
 * written before it is renamed into place (disk-write.ts), out of every scan's sight.
 */
export async function ownTempDir(root: string): Promise<string> {
  const dir = path.join(await ensureDir(root), TEMP_DIR);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new StateDirError(`${dir} is not a directory; refusing to use it`);
  return dir;
}

/**
 * Removes the temp files a process that is gone left: in `.uspark/tmp` (a pull killed mid-write)
 * and in `.uspark/` itself (writeStateFile's, of the state file or an intent); a live one's stay.
 */
export async function removeOwnTemps(root: string): Promise<void> {
  if (!checkDir(root)) return;
  removeTempsOfTheGone(path.join(stateDirPath(root), TEMP_DIR), OWN_TEMP);
  removeTempsOfTheGone(stateDirPath(root), STATE_TEMP);
}

function removeTempsOfTheGone(dir: string, shape: RegExp): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(shape.exec(name)?.[1]);
    if (pid > 0 && processGone(pid, "")) unlinkIfThere(path.join(dir, name));
  }
}
