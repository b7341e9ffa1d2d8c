import type { Reporter } from "../report.js";
import type { SyncSession } from "../sync/index.js";
import type { ScanResult, TreeScanner } from "./scanner.js";

/**
 * When scans run and where their findings go: the SAME session queue as tool and file system
 * events (cause "scan"), so a path found by both is synced once. Scans run one at a time; a
 * periodic one that finds a scan under way is skipped, never queued up.
 *
 *   start    catch-up against the base (what changed while nothing ran)
 *   ready    the file watcher's first walk is done: closes the start-up window
 *   rescan   every `everyMs` (0: never), whatever the watcher missed
 *   end      after the last events, before the exit code is decided
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
      const result = await scanner.scan(await session.base());
      for (const target of result.targets) session.add({ remote: target.remote, abs: target.abs, cause: "scan" });
      for (const file of result.unrepresentable) {
        report.warnOnce(file.abs, "refused", `not synced ${file.remote}: ${file.reason}`, { path: file.remote, cause: "scan" });
      }
      this.lastUnrepresentable = result.unrepresentable;
      report.debug("scan", `${cause} scan: ${result.files} files, ${result.hashed} hashed, ${result.targets.length} to sync (${Date.now() - started} ms)`, {
        cause,
        files: result.files,
        hashed: result.hashed,
        targets: result.targets.map((t) => t.remote),
      });
    } catch (error) {
      report.warn("scan-failed", `the ${cause} scan of the tree failed: ${(error as Error).message}`, { cause });
    } finally {
      this.busy = false;
    }
  }
}
