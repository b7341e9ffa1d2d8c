// Which blobs a project of the file store may see (docs/api.md): those named by its commits (from
// its log, so data of any older version keeps working) and those uploaded to it, one hash a line
// in DATA/projects/<dir>/blobs.txt, appended and fsynced before the upload is answered.

import { appendFile, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { isSha256 } from "../../api/validate.js";
import { fileSize, fsyncDir, isCode, writeAll } from "../fsutil.js";

export const VISIBLE_FILE = "blobs.txt";

/**
 * Adds the hashes of `dir`'s blobs.txt to `visible`. A line cut short by a crash (never answered)
 * is skipped, and ended, so that the next append starts a line of its own.
 */
export async function loadUploaded(dir: string, visible: Set<string>): Promise<void> {
  let text: string;
  try {
    text = await readFile(join(dir, VISIBLE_FILE), "utf8");
  } catch (error) {
    if (isCode(error, "ENOENT")) return;
    throw error;
  }
  for (const line of text.split("\n")) if (isSha256(line)) visible.add(line);
  if (text !== "" && !text.endsWith("\n")) await appendFile(join(dir, VISIBLE_FILE), "\n", { flush: true });
}

/** Records uploads to the project in `dir`, durably: one append and one fsync for them all. */
export async function recordUploaded(dir: string, hashes: readonly string[]): Promise<void> {
  if (hashes.length === 0) return;
  const path = join(dir, VISIBLE_FILE);
  const first = (await fileSize(path)) === undefined;
  const file = await open(path, "a");
  try {
    await writeAll(file, Buffer.from(hashes.map((sha256) => `${sha256}\n`).join("")));
    await file.datasync();
  } finally {
    await file.close();
  }
  if (first) await fsyncDir(dir);
}
