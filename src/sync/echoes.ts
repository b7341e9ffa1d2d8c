/** How soon after a tool's event the file watcher's sighting of the same path counts as its echo. */
export const ECHO_MS = 100;

/**
 * The writes the agent's events announced, for telling their echoes apart. The file watcher sees
 * each such write a few milliseconds after the event (its own coalescing): that sighting is no new
 * change, and restarting the debounce for it would hold every announced write back by the
 * watcher's delay. Only the first sighting within `ECHO_MS` is an echo: a file written again (a
 * formatter, a build) is a change like any other.
 */
export class AnnouncedWrites {
  private readonly at = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly windowMs = ECHO_MS,
  ) {}

  announce(path: string): void {
    this.at.set(path, this.now());
  }

  /** Is the file watcher's sighting of `path` the echo of an announced write? Each has one. */
  isEcho(path: string): boolean {
    const at = this.at.get(path);
    if (at === undefined) return false;
    this.at.delete(path);
    return this.now() - at <= this.windowMs;
  }

  /** Their batch is on its way: a later sighting is not held against a write already read. */
  forget(paths: Iterable<string>): void {
    for (const path of paths) this.at.delete(path);
  }
}
