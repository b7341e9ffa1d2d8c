import type { Reporter } from "../report/reporter.js";
import type { RemoteView } from "../reconcile/remote-view.js";
import { ApiError } from "../transfer/api-error.js";
import { errorText } from "../errors/text.js";

/**
 * The remote half of a two-way watch (docs/sync.md#two-way-watch): follows the project's commits
 * (`GET /commits?since=&wait=`, a long poll, on a v1.2 server; a listing every `pollMs` on an
 * older one, said once) and hands every path whose remote content changed to the session's
 * queue, where the same round decides it. What was just pulled is not pushed back: the base
 * already says both sides are equal.
 */

export interface FollowerOptions {
  view: RemoteView;
  report: Reporter;
  /** A path changed remotely: decide it. */
  changed(path: string): void;
  /** A fatal answer (401, 403, a server that contradicts itself): the session stops. */
  fatal(error: ApiError): void;
  /** The long poll's wait, ms. Default 30000. */
  waitMs?: number;
  /** Between listings of a server without the commit feed, ms. Default 5000. */
  pollMs?: number;
}

export class RemoteFollower {
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: FollowerOptions) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** Stops following (a long poll under way is cut short). */
  async stop(): Promise<void> {
    this.controller.abort(new Error("the watch ended"));
    await this.running;
  }

  private async loop(): Promise<void> {
    const { view, report } = this.options;
    const signal = this.controller.signal;
    let saidPolling = false;
    while (!signal.aborted) {
      try {
        if (!view.isLoaded) await view.ensure(signal);
        const twoWayFeed = view.api === "1.2";
        if (!twoWayFeed && !saidPolling) {
          saidPolling = true;
          report.info(
            "two-way",
            `the server has no commit feed (API ${view.api}): looking for remote changes every ${(this.options.pollMs ?? 5000) / 1000} s`,
          );
        }
        if (!twoWayFeed) await delay(this.options.pollMs ?? 5000, signal);
        const changed = await view.refresh(signal, twoWayFeed ? (this.options.waitMs ?? 30_000) : undefined);
        for (const path of changed) this.options.changed(path);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.fatal) return this.options.fatal(error);
        // Requests retry on their own; anything else is a bug worth saying, then a pause.
        report.warn("two-way", `following the remote failed: ${errorText(error)}; trying again`);
        await delay(1000, signal).catch(() => undefined);
      }
    }
  }
}

/** A pause that ends early, rejected, on `signal`; its listener goes with it (the loop pauses again and again). */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => (clearTimeout(timer), reject(signal.reason));
    const timer = setTimeout(() => (signal.removeEventListener("abort", aborted), resolve()), ms);
    signal.addEventListener("abort", aborted, { once: true });
  });
}
