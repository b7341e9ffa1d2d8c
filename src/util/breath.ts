/**
 * Lets the event loop turn once `everyMs` has passed since it last did. For synchronous file
 * system work done in place of thread pool round trips (a walk's listings, small files read for
 * upload): stdin passes through on the same thread and must not wait long for it, on a slow disk
 * or a network file system least of all.
 */
export class Breath {
  private due: number;

  constructor(private readonly everyMs = 10) {
    this.due = performance.now() + everyMs;
  }

  /** Resolves at once, or after one turn of the event loop when one is due. */
  async take(): Promise<void> {
    if (performance.now() < this.due) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.due = performance.now() + this.everyMs;
  }
}
