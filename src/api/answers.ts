import { isSha256 } from "./validate.js";
import type { Change, CommitFeed, CommitRecord, ConflictEntry, ProjectSummary } from "./types.js";

/**
 * The client's checks of what a server answers (docs/api.md): pure, so that a server that answers
 * nonsense (a feed whose versions go back, a 409 for paths never sent) is named, never looped on.
 */

export function isVersion(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

export function isProjectSummary(value: unknown): value is ProjectSummary {
  const p = value as Partial<ProjectSummary> | null;
  return !!p && typeof p.id === "string" && isVersion(p.version) && typeof p.files === "number" && typeof p.updated === "string";
}

/** A 409 `conflict` body's entries, checked (undefined when the body is not one). */
export function conflictEntries(body: Record<string, unknown> | undefined): ConflictEntry[] | undefined {
  const list = body?.conflicts;
  if (!Array.isArray(list)) return undefined;
  const ok = list.every(
    (c: Partial<ConflictEntry> | null) => !!c && typeof c.path === "string" && (c.sha256 === null || isSha256(c.sha256)),
  );
  // A clash's other path (v1.3) is what makes the client refresh its view and copy: kept when it is a path.
  const entry = (c: ConflictEntry): ConflictEntry => ({
    path: c.path,
    sha256: c.sha256,
    size: typeof c.size === "number" ? c.size : null,
    ...(typeof c.clash === "string" ? { clash: c.clash } : {}),
  });
  return ok ? (list as ConflictEntry[]).map(entry) : undefined;
}

/** Why a feed is refused: it is not a feed, or it says what cannot be true of a history (no retry mends that). */
export type FeedFault = "malformed" | "contradiction";

/**
 * A commit feed, checked: each commit one version after the one before it (starting at
 * `since + 1`, a version the server gave before; `filtered`, a path's feed: any later version),
 * every change a put or a delete of a string path, the head at least the last.
 */
export function parseFeed(
  json: Record<string, unknown> | undefined,
  since: number,
  fail: (why: string, fault: FeedFault) => Error,
  options: { filtered?: boolean } = {},
): CommitFeed {
  if (!json || !isVersion(json.version) || !Array.isArray(json.commits)) throw fail("the answer is not { version, commits }", "malformed");
  const commits: CommitRecord[] = [];
  let expected = since + 1;
  for (const item of json.commits as unknown[]) {
    const commit = item as Partial<CommitRecord> | null;
    if (!commit || !isVersion(commit.version) || !Array.isArray(commit.changes))
      throw fail("a commit is not { version, changes }", "malformed");
    // A path filter lists only the commits that touched the path: versions skip, never go back.
    if (options.filtered ? commit.version < expected : commit.version !== expected)
      throw fail(`commit versions go back, repeat or skip (v${commit.version} where v${expected} was due)`, "contradiction");
    if (!commit.changes.every(isChange)) throw fail(`commit v${commit.version} holds a change that is not a put or a delete`, "malformed");
    const record: CommitRecord = {
      version: commit.version,
      time: typeof commit.time === "string" ? commit.time : "",
      source: commit.source,
      changes: commit.changes,
    };
    if (isSha256(commit.chain)) record.chain = commit.chain;
    commits.push(record);
    expected = commit.version + 1;
  }
  if (commits.length === 0 && json.version < since) throw fail(`the head went back from v${since} to v${json.version}`, "contradiction");
  if (json.version < expected - 1)
    throw fail(`the head v${json.version} is older than the commits listed (up to v${expected - 1})`, "contradiction");
  return isSha256(json.chain) ? { version: json.version, commits, chain: json.chain } : { version: json.version, commits };
}

function isChange(value: unknown): value is Change {
  const c = value as Partial<Change> | null;
  if (!c || typeof c.path !== "string") return false;
  if (c.op === "delete") return true;
  return c.op === "put" && isSha256((c as { sha256?: unknown }).sha256) && typeof (c as { size?: unknown }).size === "number";
}

export function isShaList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isSha256);
}
