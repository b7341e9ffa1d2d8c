// Session transcripts on disk: DATA/projects/<dir>/sessions/<sessionId>.ndjson, fsynced per append.

import { mkdir, open, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileBytes, fileSize, fileStat, fsyncDir, isCode, writeAll } from "../fsutil.js";
import type { AppendOutcome, SessionInfo, StoredBytes } from "../store.js";
import { planAppend } from "../transcript.js";

const SUFFIX = ".ndjson";

export class TranscriptFiles {
  /** `dirOf` gives a project's directory (see projectDirName). */
  constructor(private readonly dirOf: (projectId: string) => string) {}

  /** Callers serialize appends per session. */
  async append(projectId: string, sessionId: string, offset: number, body: Buffer): Promise<AppendOutcome> {
    const file = this.path(projectId, sessionId);
    const length = await fileSize(file);
    if (length === undefined && offset !== 0) return { kind: "offset_mismatch", length: 0 };
    if (length === undefined) await mkdir(dirname(file), { recursive: true });

    const handle = await open(file, "a+");
    try {
      const current = length ?? 0;
      const stored = Buffer.alloc(Math.max(0, Math.min(current - offset, body.length)));
      if (stored.length > 0) await handle.read(stored, 0, stored.length, offset);
      const plan = planAppend(current, offset, body, stored);
      if (plan.kind === "mismatch") return { kind: "offset_mismatch", length: current };
      try {
        await writeAll(handle, plan.bytes);
        await handle.sync();
      } catch (error) {
        await handle.truncate(current).catch(() => {});
        throw error;
      }
      if (length === undefined) {
        await fsyncDir(dirname(file));
        await fsyncDir(dirname(dirname(file)));
      }
      return { kind: "appended", length: current + plan.bytes.length };
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /** The transcript as long as it is now; appends meanwhile are not read. */
  async read(projectId: string, sessionId: string): Promise<StoredBytes | undefined> {
    const file = this.path(projectId, sessionId);
    const size = await fileSize(file);
    return size === undefined ? undefined : fileBytes(file, size);
  }

  async list(projectId: string): Promise<SessionInfo[]> {
    const dir = join(this.dirOf(projectId), "sessions");
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (isCode(error, "ENOENT")) return [];
      throw error;
    }
    const sessions = await Promise.all(
      names
        .filter((name) => name.endsWith(SUFFIX))
        .map(async (name) => ({ id: name.slice(0, -SUFFIX.length), stats: await fileStat(join(dir, name)) })),
    );
    // A file's mtime is its last append: appends are the only writes. One gone meanwhile is left out.
    const listed = sessions.flatMap(({ id, stats }) => (stats ? [{ id, length: stats.size, updated: stats.mtime.toISOString() }] : []));
    return listed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private path(projectId: string, sessionId: string): string {
    return join(this.dirOf(projectId), "sessions", sessionId + SUFFIX);
  }
}
