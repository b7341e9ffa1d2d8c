import path from "node:path";
import type { FileChange } from "../../src/agents/types.js";
import { startFsWatcher, type FsWatcher, type FsWatcherOptions } from "../../src/fswatch/index.js";
import { Reporter } from "../../src/report/reporter.js";

/** The file watcher with its reports recorded, for the watcher's tests. */

export interface Harness {
  root: string;
  watcher: FsWatcher;
  changes: FileChange[];
  warnings: string[];
  /** Changes as "write a/b.ts" / "delete a/b.ts", relative to the root. */
  seen(): string[];
  /** Resolves once `predicate` holds over the changes so far; rejects after waitMs. */
  until(predicate: (seen: string[]) => boolean, what: string): Promise<void>;
  /** Resolves once this change has been reported. */
  saw(change: string): Promise<void>;
}

/** Starts the watcher on `root`, recording what it reports; resolves once it is ready. */
export async function startHarness(root: string, options: Partial<FsWatcherOptions> = {}, waitMs = 10_000): Promise<Harness> {
  const changes: FileChange[] = [];
  const warnings: string[] = [];
  let waiters: Array<() => void> = [];
  const report = new Reporter({
    format: "json",
    stream: {
      write(text: string) {
        const record = JSON.parse(text) as { level: string; message: string };
        if (record.level === "warn") warnings.push(record.message);
      },
    },
  });
  const watcher = startFsWatcher({
    root,
    report,
    onChange(change) {
      changes.push(change);
      for (const waiter of waiters) waiter();
    },
    ...options,
  });
  const seen = () => changes.map((change) => `${change.kind} ${path.relative(root, change.path).split(path.sep).join("/")}`);
  const until = (predicate: (seen: string[]) => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate(seen())) return;
        clearTimeout(timer);
        waiters = waiters.filter((waiter) => waiter !== check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((waiter) => waiter !== check);
        reject(new Error(`timed out waiting for ${what}; reported: ${JSON.stringify(seen())}`));
      }, waitMs);
      waiters.push(check);
      check();
    });
  await watcher.ready;
  return { root, watcher, changes, warnings, seen, until, saw: (change) => until((list) => list.includes(change), change) };
}
