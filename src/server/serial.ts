// Runs tasks one at a time per key, and knows when none is running.

export class SerialTasks {
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Runs `task` after every earlier task of `key` has settled. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const run = previous.then(task);
    const tail = run.then(
      () => {},
      () => {},
    );
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return this.track(run);
  }

  /** Counts `work` as in flight until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const done = () => this.inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves once nothing is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled(this.inFlight);
  }
}
