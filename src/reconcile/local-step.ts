import type { Reporter } from "../report/reporter.js";
import type { ProjectRemote } from "../transfer/project-remote.js";
import type { BaseKeeper } from "./base-keeper.js";
import type { Ledger } from "./ledger.js";
import { LocalChanged, WriteRefused, type LocalTree } from "./local-tree.js";
import type { LocalWrite, Plan } from "./plan.js";
import type { TransferProgress } from "./progress.js";
import { errorText } from "../errors/text.js";

/**
 * The local half of a round (a pull, a two-way watch): the remote's content written here, each file
 * through a temp file and a rename, and only if the local file still holds what was planned on
 * (re-checked right before the rename or unlink: an edit made meanwhile is kept, never overwritten).
 */

export interface LocalStepContext {
  remote: ProjectRemote;
  base: BaseKeeper;
  ledger: Ledger;
  tree: LocalTree;
  report: Reporter;
  /** Paths the local side changed under us: the next round. */
  requeue: Set<string>;
  /** Where forced-over local files are kept (`.uspark/backup/<label>/`): made only when one is (most rounds force nothing). */
  backupLabel(): string;
  onProgress?: TransferProgress;
  now(): number;
}

/** What a local step changed here: the files written and the files deleted. */
export interface LocalChanges {
  written: string[];
  removed: string[];
}

export async function localStep(plan: Plan, ctx: LocalStepContext, signal: AbortSignal): Promise<LocalChanges> {
  const changes: LocalChanges = { written: await writeAll(plan.writes, ctx, signal), removed: [] };
  for (const remove of plan.removes) {
    signal.throwIfAborted();
    try {
      await ctx.tree.remove(remove.path, { sha256: remove.expectLocal.sha256, stat: remove.expectLocal.stat });
      ctx.base.settle(remove.path, null);
      ctx.ledger.removed++;
      ctx.ledger.set(remove.path, { status: "synced", at: ctx.now() });
      ctx.report.debug("removed", `deleted ${remove.path} here (the remote deleted it)`, { path: remove.path });
      changes.removed.push(remove.path);
    } catch (error) {
      kept(remove.path, error, ctx);
    }
  }
  return changes;
}

/** Writes the remote's content here; returns the paths written (an edit made here meanwhile is kept). */
async function writeAll(writes: readonly LocalWrite[], ctx: LocalStepContext, signal: AbortSignal): Promise<string[]> {
  const written: string[] = [];
  if (writes.length === 0) return written;
  const bySha = new Map<string, LocalWrite[]>();
  for (const write of writes) bySha.set(write.sha256, [...(bySha.get(write.sha256) ?? []), write]);
  const total = { files: writes.length, bytes: writes.reduce((sum, w) => sum + w.size, 0) };
  const done = { files: 0, bytes: 0 };
  ctx.onProgress?.("pulling", done, total); // the clock of the time left starts now
  const failures = await ctx.remote.transfer.downloadBlobs(
    writes.map((w) => ({ sha256: w.sha256, size: w.size })),
    async (sha, bytes) => {
      for (const write of bySha.get(sha) ?? []) {
        if (await writeOne(write, bytes, ctx)) written.push(write.path);
        done.files++;
        done.bytes += write.size;
        ctx.onProgress?.("pulling", done, total);
      }
    },
    signal,
  );
  for (const [sha, reason] of failures) {
    for (const write of bySha.get(sha) ?? [])
      ctx.ledger.set(write.path, { status: "failed", reason: `not pulled: ${reason}`, local: ctx.tree.where(write.path) });
  }
  return written;
}

/** True when the file was written. */
async function writeOne(write: LocalWrite, bytes: Uint8Array, ctx: LocalStepContext): Promise<boolean> {
  const expected = write.expectLocal && { sha256: write.expectLocal.sha256, stat: write.expectLocal.stat };
  try {
    if (write.backup && write.expectLocal) {
      const where = await ctx.tree.backup(write.path, ctx.backupLabel());
      ctx.report.info("backup", `${write.path}: your version is kept in ${where}`, { path: write.path, backup: where });
    }
    const writtenAt = ctx.now();
    const stat = await ctx.tree.write(write.path, bytes, expected);
    ctx.base.settle(write.path, write.sha256, stat, writtenAt);
    ctx.base.closeConflict(write.path);
    ctx.ledger.pulled++;
    ctx.ledger.set(write.path, { status: "synced", at: writtenAt });
    ctx.report.debug("pulled", `pulled ${write.path}`, { path: write.path });
    return true;
  } catch (error) {
    kept(write.path, error, ctx);
    return false;
  }
}

/** A write or delete that did not happen: changed here meanwhile (the next round decides again), refused, or failed. */
function kept(path: string, error: unknown, ctx: LocalStepContext): void {
  const reason = errorText(error);
  const local = ctx.tree.where(path);
  if (error instanceof LocalChanged) {
    ctx.requeue.add(path);
    ctx.report.debug("pull-kept", `${path}: ${reason}`, { path });
    return;
  }
  if (error instanceof WriteRefused) {
    ctx.report.warn("pull-refused", `refused ${JSON.stringify(path)}: ${reason}; not written`, { path, reason });
    ctx.ledger.set(path, { status: "skipped", reason, journal: false, local });
    return;
  }
  ctx.report.warn("pull-failed", `not pulled ${JSON.stringify(path)}: ${reason}`, { path, reason });
  ctx.ledger.set(path, { status: "failed", reason, local });
}
