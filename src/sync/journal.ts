import { normalizeApiUrl } from "../config/config.js";
import type { Reporter } from "../report/reporter.js";
import { moveStateFileAside, readStateFile, removeStateFile, stateFilePath, writeStateFile } from "../state/state-dir.js";
import { withLock } from "../state/state-lock.js";
import { errorText } from "../errors/text.js";

/**
 * The journal of changes that could not be synced: `<root>/.uspark/pending.json`, so that
 * `uspark push --pending` can retry them later. Entries are keyed by API URL + project id + remote
 * path; when two entries share a key the newer one wins. Written atomically (temp file, fsync,
 * rename, fsync of the directory) through src/state/state-dir.ts, which refuses symlinks; a
 * read-merge-write holds a lock, so two sessions on one root never drop each other's entries. A
 * corrupt journal is moved aside with a warning, never silently overwritten.
 */

export interface JournalEntry {
  apiUrl: string;
  projectId: string;
  /** The path in the remote project. */
  path: string;
  /** The real local path it comes from. */
  local: string;
  /** Why it is not synced (one line). */
  reason: string;
  /** ISO time when it was journaled. */
  time: string;
}

export interface JournalFile {
  version: 1;
  entries: JournalEntry[];
}

export const JOURNAL_NAME = "pending.json";

export function journalPath(root: string): string {
  return stateFilePath(root, JOURNAL_NAME);
}

export function journalKey(entry: Pick<JournalEntry, "apiUrl" | "projectId" | "path">): string {
  return JSON.stringify([normalizeApiUrl(entry.apiUrl), entry.projectId, entry.path]);
}

/** Merges `added` into `existing`; per key the newer entry wins (on a tie, the added one). */
export function mergeEntries(existing: readonly JournalEntry[], added: readonly JournalEntry[]): JournalEntry[] {
  const byKey = new Map<string, JournalEntry>();
  for (const entry of existing) put(entry, false);
  for (const entry of added) put(entry, true);
  return [...byKey.values()];

  function put(entry: JournalEntry, winsTies: boolean): void {
    const key = journalKey(entry);
    const old = byKey.get(key);
    if (old) {
      const a = Date.parse(old.time);
      const b = Date.parse(entry.time);
      if (b < a || (b === a && !winsTies)) return;
      byKey.delete(key);
    }
    byKey.set(key, entry);
  }
}

export interface SyncedPath {
  apiUrl: string;
  projectId: string;
  path: string;
  /** When the content that got synced was read; older entries are settled by it. */
  at: number;
}

/** Drops the entries settled by a later successful sync of the same path. */
export function removeSynced(entries: readonly JournalEntry[], synced: readonly SyncedPath[]): JournalEntry[] {
  const settledAt = new Map<string, number>();
  for (const item of synced) {
    const key = journalKey(item);
    settledAt.set(key, Math.max(settledAt.get(key) ?? -Infinity, item.at));
  }
  return entries.filter((entry) => {
    const at = settledAt.get(journalKey(entry));
    return at === undefined || Date.parse(entry.time) > at;
  });
}

/** Entries of one project. */
export function entriesFor(entries: readonly JournalEntry[], apiUrl: string, projectId: string): JournalEntry[] {
  const api = normalizeApiUrl(apiUrl);
  return entries.filter((e) => normalizeApiUrl(e.apiUrl) === api && e.projectId === projectId);
}

/** Parses a journal's text; throws with a reason when it is not a valid journal. */
export function parseJournal(text: string): JournalEntry[] {
  const data: unknown = JSON.parse(text);
  if (!data || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
  const file = data as Partial<JournalFile>;
  if (file.version !== 1) throw new Error(`unknown journal version ${JSON.stringify(file.version)}`);
  if (!Array.isArray(file.entries)) throw new Error("entries is not an array");
  return file.entries.map((entry: unknown, i) => {
    const e = entry as Partial<JournalEntry> | null;
    const fields = ["apiUrl", "projectId", "path", "local", "reason", "time"] as const;
    if (!e || typeof e !== "object" || fields.some((f) => typeof e[f] !== "string") || Number.isNaN(Date.parse(e.time!))) {
      throw new Error(`entries[${i}] is not { ${fields.join(", ")} }`);
    }
    return { apiUrl: e.apiUrl!, projectId: e.projectId!, path: e.path!, local: e.local!, reason: e.reason!, time: e.time! };
  });
}

/**
 * Reads the journal; no file is no entries. A corrupt file is moved aside to
 * `pending.json.corrupt-<time>` (with a warning) and read as empty.
 */
export async function readJournal(root: string, report?: Reporter): Promise<JournalEntry[]> {
  const text = await readStateFile(root, JOURNAL_NAME);
  if (text === undefined) return [];
  try {
    return parseJournal(text);
  } catch (error) {
    const file = journalPath(root);
    const aside = await moveStateFileAside(
      root,
      JOURNAL_NAME,
      `${JOURNAL_NAME}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`,
    ).catch(() => undefined);
    report?.warn(
      "journal-corrupt",
      `the journal ${file} is unreadable (${errorText(error)}); ${aside ? `moved it to ${aside} and ` : ""}started a new one`,
      { file, movedTo: aside },
    );
    return [];
  }
}

/**
 * Read-merge-write: adds `add` (newest wins), drops what `synced` settles, writes atomically (or
 * removes the file when nothing is left). Returns the entries now in the journal.
 */
export async function updateJournal(
  root: string,
  change: { add?: readonly JournalEntry[]; synced?: readonly SyncedPath[] },
  report?: Reporter,
): Promise<JournalEntry[]> {
  return withLock(root, JOURNAL_NAME, async () => {
    const before = await readJournal(root, report);
    let entries = mergeEntries(before, change.add ?? []);
    if (change.synced?.length) entries = removeSynced(entries, change.synced);
    if (entries.length === 0) {
      if (before.length > 0) await removeStateFile(root, JOURNAL_NAME);
      return entries;
    }
    await writeJournal(root, entries);
    return entries;
  });
}

/** Writes the whole journal atomically (callers that read first hold the lock: see updateJournal). */
export async function writeJournal(root: string, entries: readonly JournalEntry[]): Promise<void> {
  const body: JournalFile = { version: 1, entries: [...entries] };
  await writeStateFile(root, JOURNAL_NAME, JSON.stringify(body, null, 2) + "\n");
}

/** At the start of a watch: say so when an earlier run left changes of this project unsynced. */
export async function remindOfPending(root: string, apiUrl: string, projectId: string, report: Reporter): Promise<void> {
  try {
    const pending = entriesFor(await readJournal(root, report), apiUrl, projectId);
    if (pending.length === 0) return;
    const files = pending.length === 1 ? "1 file" : `${pending.length} files`;
    report.warn("pending", `${files} from an earlier run still unsynced (${journalPath(root)}): run \`uspark push --pending\` to retry`, {
      paths: pending.map((entry) => entry.path),
    });
  } catch (error) {
    report.debug("pending", `could not read ${journalPath(root)}: ${errorText(error)}`);
  }
}
