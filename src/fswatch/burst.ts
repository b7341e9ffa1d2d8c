/**
 * Linux drops inotify events past fs.inotify.max_queued_events (an IN_Q_OVERFLOW that Node's
 * fs.watch never passes on), e.g. when a `git checkout` or a code generator writes tens of
 * thousands of files. A burst of events between two looks at the queue is taken as a sign that
 * some were dropped: the tree is then rescanned once the burst is over.
 */
export class BurstDetector {
  private count = 0;
  private suspect = false;

  constructor(private readonly threshold: number) {}

  event(): void {
    this.count++;
  }

  /** Called once per coalescing window: "rescan" when a burst just ended, "wait" while one goes on. */
  windowEnd(): "rescan" | "wait" | "none" {
    const burst = this.count >= this.threshold;
    this.count = 0;
    if (burst) {
      this.suspect = true;
      return "wait";
    }
    return this.takeSuspicion() ? "rescan" : "none";
  }

  /** True once after a burst was seen (and forgets it). */
  takeSuspicion(): boolean {
    const suspect = this.suspect;
    this.suspect = false;
    return suspect;
  }
}

/** Events within one coalescing window that make an overflow plausible. */
export function burstThreshold(maxQueuedEvents: number | undefined): number {
  return Math.max(256, Math.min(2048, Math.floor((maxQueuedEvents ?? 16384) / 8)));
}
