// Project directories of the file store: DATA/projects/<dir>/ exists for every project created.
// A project id that is a plain name (A-Z a-z 0-9 . _ -, as every id was before v1.2) is its own
// directory name; any other id becomes "~" and the SHA-256 of the id, which keeps names short and
// safe whatever the id holds, and the id itself is kept in the directory's project.json.

import { createHash, randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { fsyncDir, writeFileDurably } from "../fsutil.js";

export const PROJECT_FILE = "project.json";

const PLAIN = /^[A-Za-z0-9._-]{1,255}$/;
const ENCODED = /^~[0-9a-f]{64}$/;
/** Not a plain name and not an encoded one: never taken for a project. */
const TEMP_PREFIX = "~tmp-";

/** The directory name of a project id (see the top of this file). */
export function projectDirName(id: string): string {
  return PLAIN.test(id) && id !== "." && id !== ".." ? id : `~${createHash("sha256").update(id).digest("hex")}`;
}

/**
 * Makes a project's directory with its project.json, whole or not at all: written in a temp
 * directory, then renamed into place. The caller knows the project does not exist yet.
 */
export async function createProjectDir(projectsDir: string, id: string, created: string): Promise<string> {
  const temp = join(projectsDir, `${TEMP_PREFIX}${randomUUID()}`);
  const dir = join(projectsDir, projectDirName(id));
  await mkdir(temp);
  try {
    await writeFileDurably(join(temp, PROJECT_FILE), `${JSON.stringify({ id, created })}\n`);
    await fsyncDir(temp);
    await rename(temp, dir);
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
  await fsyncDir(projectsDir);
  return dir;
}

export interface FoundProject {
  id: string;
  dir: string;
  /** ISO time it was created (its directory's modification time for one made before v1.2). */
  created: string;
}

/**
 * The project directories under `projectsDir`, with or without commits. Leftovers of a creation cut
 * short are removed; other entries that are no project directory (a stray .DS_Store) are skipped,
 * an encoded directory whose project.json cannot be read with a warning.
 */
export async function findProjects(projectsDir: string, warn: (message: string) => void): Promise<FoundProject[]> {
  const found: FoundProject[] = [];
  for (const entry of await readdir(projectsDir, { withFileTypes: true })) {
    const dir = join(projectsDir, entry.name);
    if (!entry.isDirectory()) continue;
    if (entry.name.startsWith(TEMP_PREFIX)) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    if (!PLAIN.test(entry.name) && !ENCODED.test(entry.name)) continue;
    const saved = await readProjectFile(dir);
    const id = ENCODED.test(entry.name) ? saved?.id : entry.name;
    if (id === undefined || projectDirName(id) !== entry.name) {
      warn(`${dir}: skipped, its ${PROJECT_FILE} does not name the project it holds`);
      continue;
    }
    found.push({ id, dir, created: saved?.created ?? (await stat(dir)).mtime.toISOString() });
  }
  return found;
}

async function readProjectFile(dir: string): Promise<{ id?: string; created?: string } | undefined> {
  try {
    const saved = JSON.parse(await readFile(join(dir, PROJECT_FILE), "utf8")) as { id?: unknown; created?: unknown };
    return {
      ...(typeof saved.id === "string" ? { id: saved.id } : {}),
      ...(typeof saved.created === "string" ? { created: saved.created } : {}),
    };
  } catch {
    return undefined; // absent (a project made before v1.2) or unreadable
  }
}
