import type { ProjectSummary } from "../api/types.js";
import { UsageError } from "../config/config.js";
import { plural, type Reporter } from "../report/reporter.js";
import { formatTable } from "../text/table.js";
import { ApiError, type ApiClient } from "./client.js";

/**
 * Projects exist or not (docs/commands.md#projects): a v1.2 server answers 404 `project_not_found` for a
 * project never created. A mistyped id is a usage error (exit 2) naming the known ids closest to
 * it; `--create` (or `uspark projects create <id>`) makes one. An older server cannot say: it
 * creates projects on their first commit, as before.
 */

/** Is this the server saying the project does not exist? */
export function isProjectNotFound(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 404 && error.code === "project_not_found";
}

/**
 * Runs `work`; when the project does not exist, creates it first (`create`) and runs it again, or
 * throws a UsageError that names the nearest known ids.
 */
export async function withProject<T>(
  client: ApiClient,
  projectId: string,
  create: boolean,
  report: Reporter,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isProjectNotFound(error)) throw error;
    if (!create) throw await unknownProject(client, projectId);
    await client.createProject(projectId);
    report.info("project", `created project ${projectId}`, { projectId });
    return work();
  }
}

/** The error for a project that does not exist: the closest ids the token can see, and how to create it. */
export async function unknownProject(client: ApiClient, projectId: string): Promise<UsageError> {
  const known = await client.listProjects().catch(() => [] as ProjectSummary[]);
  const near = nearestIds(
    projectId,
    known.map((p) => p.id),
  );
  const hint =
    `create it with \`uspark projects create ${projectId}\` or --create` + (near.length > 0 ? `; did you mean ${near.join(", ")}?` : "");
  return new UsageError(`project ${projectId} does not exist on the server`, hint);
}

/** Up to three ids within a small edit distance of `id`, closest first. */
export function nearestIds(id: string, ids: readonly string[]): string[] {
  const limit = Math.max(2, Math.floor(id.length / 3));
  return ids
    .map((candidate) => ({ candidate, distance: editDistance(id.toLowerCase(), candidate.toLowerCase()) }))
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** `uspark projects`: the table (or JSON) on stdout; with none to list, how to make one is said on stderr (`none`). */
export async function listProjects(
  client: ApiClient,
  out: { write(text: string): unknown },
  json: boolean,
  none: (line: string) => void,
): Promise<void> {
  const projects = await client.listProjects();
  if (json) {
    out.write(JSON.stringify({ projects }) + "\n");
    return;
  }
  if (projects.length === 0)
    return none(
      "no projects this token can see yet: create one with `uspark projects create <id>` (or `--create` on push, pull, watch or run)",
    );
  out.write(formatTable(projects.map((p) => [p.id, `v${p.version}`, plural(p.files, "file"), p.updated])));
}
