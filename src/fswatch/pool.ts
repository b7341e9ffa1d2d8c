/**
 * Runs `work` over a queue that may grow while it runs, at most `concurrency` at a time (directory
 * listings: libuv has 4 threads by default). Resolves when the queue is empty and nothing runs.
 */
export function drain<T>(queue: T[], concurrency: number, work: (item: T, done: (more?: readonly T[]) => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let active = 0;
    let pumping = false;
    const pump = () => {
      // A job that ends at once calls back into pump: let the running loop go on instead.
      if (pumping) return;
      pumping = true;
      while (active < concurrency && queue.length > 0) {
        const item = queue.pop()!;
        active++;
        work(item, (more) => {
          active--;
          if (more) queue.push(...more);
          pump();
        });
      }
      pumping = false;
      if (active === 0 && queue.length === 0) resolve();
    };
    pump();
  });
}
