import type { Reporter } from "../report/reporter.js";
import type { Unrepresentable } from "../reconcile/local-tree.js";
import type { SyncSession } from "./session.js";
import { errorText } from "../errors/text.js";

/**
 * When scans run and where their findings go: the SAME session queue as tool and file system
 * events (cause "scan"), so a path found by both is decided once. Scans run one at a time; a
 * periodic one that finds a scan under way is skipped, never queued up. What a scan is, is the
 * reconcile's business (src/reconcile/scan.ts).
 *
 *   start    catch-up against the base (what changed while nothing ran)
 *   ready    the file watcher's first walk is done: closes the start-up window
 *   rescan   every `everyMs` (0: never), whatever the watcher missed
 *   end      after the last events, before the exit code is decided (skipped when the file
 *            watcher says every change was reported and the ready scan is done)
 */

export type ScanCause = "start" | "ready" | "rescan" | "end";

export interface ScanLoopOptions {
  session: SyncSession;
  report: Reporter;
  /** Rescan every this many ms; 0: only start, ready and end. */
  everyMs: number;
  /** Also look for remote changes (a two-way watch). */
  twoWay: boolean;
}

export class ScanLoop {
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  private closed = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastUnrepresentable: Unrepresentable[] = [];
  private readonly cutShort = new AbortController();
  /** The scan after the file watcher's first walk ran to its end: from then on its events tell every change. */
  private readyScanned = false;

  constructor(private readonly options: ScanLoopOptions) {
    if (options.everyMs > 0) {
      this.timer = setInterval(() => {
        if (!this.busy) void this.run("rescan");
      }, options.everyMs);
      this.timer.unref();
    }
  }

  /** In-root files the API cannot represent, as the latest scan found them. */
  get unrepresentable(): readonly Unrepresentable[] {
    return this.lastUnrepresentable;
  }

  /** The flush timeout cut the last scans short: what they would have found is not known to be synced. */
  get cutShortByDeadline(): boolean {
    return this.cutShort.signal.aborted;
  }

  /** Runs a scan after the one under way; never rejects (a failed scan is a warning). */
  run(cause: ScanCause): Promise<void> {
    if (this.closed) return this.running;
    this.running = this.running.then(() => this.scanOnce(cause));
    return this.running;
  }

  /**
   * The last scan (after the last events), then no more: a late "ready" must not follow it.
   * `deadline` cuts it, and any scan still queued or under way, short.
   */
  end(deadline?: AbortSignal, eventsComplete = false): Promise<void> {
    if (deadline?.aborted) this.cutShort.abort(deadline.reason);
    else deadline?.addEventListener("abort", () => this.cutShort.abort(deadline.reason), { once: true });
    // A healthy file watcher that says every change was reported makes the last walk of a large
    // tree (a second at 50,000 files) a formality, once the scan after its first walk is done.
    const last = eventsComplete ? this.running.then(() => (this.readyScanned ? this.skipEnd() : this.scanOnce("end"))) : this.run("end");
    this.running = last;
    this.stop();
    return last;
  }

  private skipEnd(): void {
    this.options.report.debug("scan", "end scan skipped: the file watcher reported every change since its ready scan", {
      cause: "end",
      skipped: true,
    });
  }

  /** No more scans (one under way finishes). */
  stop(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  private async scanOnce(cause: ScanCause): Promise<void> {
    const { session, report } = this.options;
    if (session.stopped || this.cutShort.signal.aborted) return;
    this.busy = true;
    const signal = AbortSignal.any([session.signal, this.cutShort.signal]);
    try {
      const started = Date.now();
      const { reconciler } = await session.ready();
      const found = await reconciler.scan(this.options.twoWay, signal);
      for (const path of found.paths) session.add({ remote: path, cause: "scan" });
      for (const file of found.unrepresentable)
        report.warnOnce(file.key, "refused", `not synced ${file.remote}: ${file.reason}`, { path: file.remote, cause: "scan" });
      this.lastUnrepresentable = found.unrepresentable;
      report.debug("scan", `${cause} scan: ${found.files} files, ${found.paths.length} to decide (${Date.now() - started} ms)`, {
        cause,
        files: found.files,
        hashed: found.hashed,
        targets: found.paths,
      });
      if (cause === "ready") this.readyScanned = true;
    } catch (error) {
      if (this.cutShort.signal.aborted)
        report.warn(
          "scan-cut-short",
          `the ${cause} scan was cut short: ${errorText(this.cutShort.signal.reason)}; the next start catches up`,
          { cause },
        );
      else if (!session.signal.aborted) report.warn("scan-failed", `the ${cause} scan of the tree failed: ${errorText(error)}`, { cause });
    } finally {
      this.busy = false;
    }
  }
}
