import { readFile } from "node:fs/promises";
import type { Plan } from "../reconcile/plan.js";
import { blobBytes } from "./history.js";
import { writeStdout } from "../terminal/output.js";
import { resolvePaths } from "./scope.js";
import { openInspection, type InspectOptions } from "./status.js";
import { unifiedDiff } from "../text/unified-diff.js";
import type { Workspace } from "./workspace.js";
import { errorText } from "../errors/text.js";

/**
 * `uspark diff [path…] [--remote]` (docs/commands.md#status-diff-and-history): a dry run's plan,
 * shown as unified diffs. Without --remote, what changed here since the last sync (the base's
 * content, fetched from the server by its hash, then yours); with --remote, what a pull would
 * change (yours, then the remote's). Conflicts show in both. A binary file is one line. Exit 0
 * shown, 1 failed, 2 bad usage.
 */

export interface DiffOptions extends InspectOptions {
  paths: string[];
  remote: boolean;
  cwd?: string;
}

/** One side of a diff: content from the server by hash, the local file, or nothing. */
type Side = { kind: "blob"; sha256: string; size: number } | { kind: "local" } | { kind: "absent" };

interface FileDiff {
  path: string;
  from: Side;
  to: Side;
}

export async function runDiff(options: DiffOptions): Promise<number> {
  const scope = resolvePaths({ ...options, ignore: options.ignore ? [...options.ignore] : undefined });
  if (scope === "usage") return 2;
  const ws = await openInspection(options, "diff");
  if (typeof ws === "number") return ws;
  try {
    const result = await ws.reconciler.round({ mode: "push", paths: "all", dryRun: true, within: scope?.contains }, ws.signal);
    const hereNow = new Set(result.states.filter((s) => s.local !== null).map((s) => s.path));
    for (const file of fileDiffs(result.plan, ws, options.remote, hereNow)) await writeStdout(await diffText(ws, file));
    return 0;
  } catch (error) {
    options.report.error("diff-failed", `diff failed: ${errorText(error)}`);
    return 1;
  } finally {
    await ws.close();
  }
}

/** The files to show, by path: local changes against the base, or (remote) remote changes against the local file. */
function fileDiffs(plan: Plan, ws: Workspace, remote: boolean, hereNow: ReadonlySet<string>): FileDiff[] {
  const base = (path: string): Side => {
    const entry = ws.base.entry(path);
    return entry ? { kind: "blob", sha256: entry.sha256, size: entry.size } : { kind: "absent" };
  };
  const theirs = (path: string): Side => {
    const entry = ws.view.get(path);
    return entry ? { kind: "blob", ...entry } : { kind: "absent" };
  };
  const local: Side = { kind: "local" };
  const conflicts = [...plan.conflicts.map((c) => c.path), ...plan.stillOpen.map((c) => c.path)];
  const diffs: FileDiff[] = remote
    ? [...plan.leftAlone.filter((l) => l.decision.kind === "pull").map((l) => l.path), ...conflicts].map((path) => ({
        path,
        from: hereNow.has(path) ? local : ({ kind: "absent" } as Side),
        to: theirs(path),
      }))
    : [
        ...plan.puts.map((p) => ({ path: p.path, from: base(p.path), to: local })),
        ...plan.deletes.map((d) => ({ path: d.path, from: base(d.path), to: { kind: "absent" } as Side })),
        ...conflicts.map((path) => ({ path, from: base(path), to: local })),
      ];
  return diffs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function diffText(ws: Workspace, { path, from, to }: FileDiff): Promise<string> {
  const [before, after] = [await contentOf(ws, path, from), await contentOf(ws, path, to)];
  const header = `diff --uspark a/${path} b/${path}\n`;
  const oldName = from.kind === "absent" ? "/dev/null" : `a/${path}`;
  const newName = to.kind === "absent" ? "/dev/null" : `b/${path}`;
  const [oldText, newText] = [asText(before), asText(after)];
  if (oldText === undefined || newText === undefined) return `${header}Binary files ${oldName} and ${newName} differ\n`;
  return header + unifiedDiff(oldText, newText, oldName, newName);
}

async function contentOf(ws: Workspace, path: string, side: Side): Promise<Uint8Array> {
  if (side.kind === "absent") return new Uint8Array();
  if (side.kind === "local") return readFile(ws.tree.where(path)).catch(() => new Uint8Array());
  return blobBytes(ws, side);
}

/** UTF-8 text, or undefined for a binary file (a NUL byte, or bytes that are not UTF-8). */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
