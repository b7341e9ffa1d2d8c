import { isMassDelete, MASS_DELETE_TEXT } from "../mass-delete.js";
import type { Reporter } from "../report.js";
import type { SyncSession } from "../sync/index.js";
import type { ScanResult, ScanTarget, TreeScanner } from "./scanner.js";

interface NotSynced {
  remote: string;
  reason: string;
}

/**
 * When scans run and where their findings go: the SAME session queue as tool and file system
 * events (cause "scan"), so a path found by both is synced once. Scans run one at a time; a
 * periodic one that finds a scan under way is skipped, never queued up.
 *
 *   start    catch-up against the base (what changed while nothing ran)
 *   ready    the file watcher's first walk is done: closes the start-up window
 *   rescan   every `everyMs` (0: never), whatever the watcher missed
 *   end      after the last events, before the exit code is decided
 *
 * A scan that finds most of the base gone (see mass-delete.ts) deletes nothing remotely: those
 * files are held back, said once, and count as not synced, until a later scan finds them back.
 */

export type ScanCause = "start" | "ready" | "rescan" | "end";

export interface ScanLoopOptions {
  scanner: TreeScanner;
  session: SyncSession;
  report: Reporter;
  /** Rescan every this many ms; 0: only start, ready and end. */
  everyMs: number;
}

export class ScanLoop {
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  private closed = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastUnrepresentable: ScanResult["unrepresentable"] = [];
  private lastHeldDeletes: NotSynced[] = [];

  constructor(private readonly options: ScanLoopOptions) {
    if (options.everyMs > 0) {
      this.timer = setInterval(() => {
        if (!this.busy) void this.run("rescan");
      }, options.everyMs);
      this.timer.unref();
    }
  }

  /** In-root files the API cannot represent, as the latest scan found them. */
  get unrepresentable(): ScanResult["unrepresentable"] {
    return this.lastUnrepresentable;
  }

  /** Base files the latest scan found missing and did not delete remotely: most of the base. */
  get heldDeletes(): readonly NotSynced[] {
    return this.lastHeldDeletes;
  }

  /** Runs a scan after the one under way; never rejects (a failed scan is a warning). */
  run(cause: ScanCause): Promise<void> {
    if (this.closed) return this.running;
    this.running = this.running.then(() => this.scanOnce(cause));
    return this.running;
  }

  /** The last scan (after the last events), then no more: a late "ready" must not follow it. */
  end(): Promise<void> {
    const last = this.run("end");
    this.stop();
    return last;
  }

  /** No more scans (one under way finishes). */
  stop(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  private async scanOnce(cause: ScanCause): Promise<void> {
    const { session, scanner, report } = this.options;
    this.busy = true;
    try {
      const started = Date.now();
      const base = await session.base();
      const result = await scanner.scan(base);
      const targets = this.holdMassDelete(result.targets, base.files.size);
      for (const target of targets) session.add({ remote: target.remote, abs: target.abs, cause: "scan" });
      for (const file of result.unrepresentable) {
        report.warnOnce(file.abs, "refused", `not synced ${file.remote}: ${file.reason}`, { path: file.remote, cause: "scan" });
      }
      this.lastUnrepresentable = result.unrepresentable;
      report.debug("scan", `${cause} scan: ${result.files} files, ${result.hashed} hashed, ${targets.length} to sync (${Date.now() - started} ms)`, {
        cause,
        files: result.files,
        hashed: result.hashed,
        targets: targets.map((t) => t.remote),
      });
    } catch (error) {
      report.warn("scan-failed", `the ${cause} scan of the tree failed: ${(error as Error).message}`, { cause });
    } finally {
      this.busy = false;
    }
  }

  /** The scan's targets without its deletes when they are most of the base (held back, said once). */
  private holdMassDelete(targets: readonly ScanTarget[], baseFiles: number): readonly ScanTarget[] {
    const deletes = targets.filter((t) => t.kind === "delete");
    if (!isMassDelete(deletes.length, baseFiles)) {
      this.lastHeldDeletes = [];
      return targets;
    }
    const reason = `missing here; not deleted remotely, as more than ${MASS_DELETE_TEXT} of the synced files are missing`;
    this.lastHeldDeletes = deletes.map((t) => ({ remote: t.remote, reason }));
    this.options.report.warnOnce(
      "mass-delete",
      "mass-delete",
      `${deletes.length} of the ${baseFiles} files the last sync saw are missing here: not deleting them remotely ` +
        "(a wrong --root or --prefix, a volume not mounted, a half-checked-out tree?). " +
        "If they are meant to go: uspark push --delete --force",
      { deletes: deletes.length, base: baseFiles },
    );
    return targets.filter((t) => t.kind !== "delete");
  }
}
