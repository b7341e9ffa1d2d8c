import { readJournal, entriesFor } from "../sync/journal.js";
import type { Reporter } from "../report/reporter.js";
import { writeStdout } from "../terminal/output.js";
import { longStatus, shortStatus, statusEntries, type StatusReport } from "../terminal/status-report.js";
import { openOrExit, type Workspace, type WorkspaceCommand, type WorkspaceOptions } from "./workspace.js";
import { errorText } from "../errors/text.js";

/**
 * `uspark status [--json] [--short]` (docs/commands.md#status-diff-and-history): one round of the
 * reconcile as a dry run, over the whole tree, the base and the remote listing: what a push would
 * send, what a pull would take, open conflicts, held deletes, journal entries. Nothing is written
 * or sent. Exit 0 when all is in sync, 1 when anything is not (like `git diff --quiet`), 2 bad
 * usage; the same with --json.
 */

export type InspectOptions = Omit<WorkspaceOptions, "source" | "maxFileSize" | "concurrency"> & { maxFileSize?: number };

export interface StatusOptions extends InspectOptions {
  json: boolean;
  short: boolean;
}

export async function runStatus(options: StatusOptions): Promise<number> {
  const ws = await openInspection(options, "status");
  if (typeof ws === "number") return ws;
  try {
    const report = await statusOf(ws, options);
    await writeStdout(options.json ? JSON.stringify(report) + "\n" : options.short ? shortStatus(report) : longStatus(report));
    return report.inSync ? 0 : 1;
  } catch (error) {
    options.report.error("status-failed", `status failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

/**
 * A workspace for a command that looks: no file size limit (a large file is still a change), a few
 * connections. It writes nothing unless `writes` (restore, which records what it wrote as the base).
 */
export function openInspection(options: InspectOptions, command: WorkspaceCommand, writes = false): Promise<Workspace | 1 | 2> {
  return openOrExit(
    {
      ...options,
      maxFileSize: options.maxFileSize ?? Number.MAX_SAFE_INTEGER,
      concurrency: 4,
      source: { agent: command },
      dryRun: !writes,
    },
    command,
  );
}

export async function statusOf(ws: Workspace, options: { apiUrl: string; projectId: string; report: Reporter }): Promise<StatusReport> {
  const result = await ws.reconciler.round({ mode: "push", paths: "all", dryRun: true }, ws.signal);
  const journal = entriesFor(await readJournal(ws.root, options.report), options.apiUrl, options.projectId);
  const { base } = ws.base;
  const refused = result.outOfScope.filter((o) => o.refused).map((o) => o.path);
  const paths = statusEntries({
    plan: result.plan,
    inBase: (p) => base.files.has(p),
    openConflicts: base.conflicts,
    pending: journal.map((e) => e.path),
    refused,
  });
  return {
    format: 1,
    projectId: options.projectId,
    apiUrl: options.apiUrl,
    root: ws.root,
    baseVersion: base.version,
    remoteVersion: ws.view.version,
    inSync: paths.length === 0,
    paths,
  };
}
