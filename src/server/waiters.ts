// Long polls of GET /commits?wait=ms: who waits for which project past which version. A store
// tells it what the heads are (after its own commits, or as a database notifies it); no waiter
// holds anything but a timer and a listener on its abort signal.

interface Waiter {
  since: number;
  wake(): void;
}

export class CommitWaiters {
  private readonly byProject = new Map<string, Set<Waiter>>();
  private count = 0;

  /** How many waits are in progress. */
  get size(): number {
    return this.count;
  }

  /** The projects someone waits for. */
  projects(): string[] {
    return [...this.byProject.keys()];
  }

  /** The project's head is (at least) `version`: wakes the waiters for a version before it. */
  committed(projectId: string, version: number): void {
    for (const waiter of this.byProject.get(projectId) ?? []) {
      if (version > waiter.since) waiter.wake();
    }
  }

  /**
   * Resolves once `head()` is past `since` (true), after `ms`, or when `signal` aborts (false). The head is read
   * after the waiter is registered (a commit just before is seen) and again after each wake-up
   * (a wake-up may be for another database sharing the notification channel).
   */
  async waitPast(
    projectId: string,
    since: number,
    ms: number,
    signal: AbortSignal,
    head: () => number | Promise<number>,
  ): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (let left = ms; left > 0 && !signal.aborted; left = deadline - Date.now()) {
      const waiting = this.register(projectId, since, left, signal);
      let past: boolean;
      try {
        past = (await head()) > since;
      } catch (error) {
        waiting.end();
        throw error;
      }
      if (past) {
        waiting.end();
        return true;
      }
      await waiting.done;
    }
    return false;
  }

  private register(projectId: string, since: number, ms: number, signal: AbortSignal) {
    let waiters = this.byProject.get(projectId);
    if (!waiters) this.byProject.set(projectId, (waiters = new Set()));
    const set = waiters;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const end = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", end);
      if (set.delete(waiter)) this.count--;
      if (set.size === 0 && this.byProject.get(projectId) === set) this.byProject.delete(projectId);
      finish();
    };
    const waiter: Waiter = { since, wake: end };
    const timer = setTimeout(end, ms);
    set.add(waiter);
    this.count++;
    signal.addEventListener("abort", end, { once: true });
    /** `end` is idempotent: the first of wake, timer, abort or the caller's end wins. */
    return { done, end };
  }
}
