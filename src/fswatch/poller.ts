import type { DirNode } from "./tree.js";
import { drain } from "./pool.js";

/**
 * The directories that are listed and stat'ed on an interval instead of watched: all of them in
 * poll mode, else those the OS refused to watch (inotify limits). Polling alone never keeps the
 * process alive.
 */
export class Poller {
  readonly nodes = new Set<DirNode>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private started = false;
  private stopped = false;

  constructor(
    private readonly interval: number,
    private readonly concurrency: number,
    /** Lists one directory and reports its differences. */
    private readonly pollDir: (node: DirNode, done: () => void) => void,
    /** Counts a round as work in flight (settle waits for it). */
    private readonly track: (work: Promise<void>) => void,
  ) {}

  add(node: DirNode): void {
    this.nodes.add(node);
    this.schedule();
  }

  delete(node: DirNode): void {
    this.nodes.delete(node);
  }

  /** The first walk is done: before, a round would take half-listed directories for new ones. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.nodes.clear();
  }

  /** A fresh round: one that is running may have passed the change by already. */
  async now(): Promise<void> {
    if (!this.started || this.nodes.size === 0) return;
    if (this.round) await this.round;
    await this.run();
  }

  private schedule(): void {
    if (this.stopped || !this.started || this.nodes.size === 0 || this.timer || this.round) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, this.interval);
    this.timer.unref();
  }

  private run(): Promise<void> {
    if (this.round) return this.round;
    clearTimeout(this.timer);
    this.timer = undefined;
    const round = drain([...this.nodes], this.concurrency, (node, done) => this.pollDir(node, () => done())).finally(() => {
      this.round = undefined;
      this.schedule();
    });
    this.round = round;
    this.track(round);
    return round;
  }
}
