import { describe, expect, it } from "vitest";
import { BaseKeeper } from "../../src/reconcile/base-keeper.js";
import type { Base } from "../../src/reconcile/base.js";
import type { Intent, StateStore } from "../../src/reconcile/state-store.js";
import type { Reporter } from "../../src/report/reporter.js";
import type { Timers } from "../../src/util/timers.js";

/**
 * The saves of the base while a save is slow (a 50,000-entry state file on a loaded machine): a
 * first push settles a commit every fraction of a second, and each save used to copy the whole
 * base when its timer fired, to wait behind the one being written: copies piled up (RSS) and each
 * was written in turn (CPU). Now one save waits at most, and takes its copy when it starts.
 */

const SHA = (n: number) => n.toString(16).padStart(64, "0");
const silent = new Proxy({}, { get: () => () => undefined }) as unknown as Reporter;

/** Timers fired by hand: the test says when the save interval is over. */
function manualTimers(): Timers & { fire(): void } {
  const pending = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (callback) => (pending.set(++next, callback), next),
    clearTimeout: (handle) => void pending.delete(handle as number),
    now: () => 1_000,
    fire() {
      const due = [...pending.values()];
      pending.clear();
      for (const callback of due) callback();
    },
  };
}

/** A store whose saves wait until released, and which records what each was given. */
function gatedStore() {
  const saved: { files: number; paths: number }[] = [];
  const removed: string[] = [];
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (release = resolve));
  const store: StateStore = {
    load: async () => undefined,
    save: async (base: Base, paths: ReadonlySet<string>) => {
      saved.push({ files: base.files.size, paths: paths.size });
      await gate;
    },
    writeIntent: async (_intent: Intent) => undefined,
    removeIntent: async (key: string) => void removed.push(key),
    openIntents: async () => [],
  };
  return {
    store,
    saved,
    removed,
    open() {
      release();
      gate = Promise.resolve();
    },
  };
}

const settleTicks = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the base's saves behind a slow one", () => {
  it("wait as one save, which takes the base as it is when it starts, and removes the intents it records", async () => {
    const timers = manualTimers();
    const gated = gatedStore();
    const keeper = await BaseKeeper.load(
      { apiUrl: "http://127.0.0.1:1", projectId: "p" },
      { store: gated.store, report: silent, timers, saveEveryMs: 10 },
    );
    keeper.settle("f0", SHA(0));
    timers.fire();
    await settleTicks();
    expect(gated.saved).toHaveLength(1); // written now, and slow
    for (let i = 1; i <= 20; i++) {
      await keeper.sending({
        key: `k${i}`,
        source: { agent: "test" },
        changes: [{ op: "put", path: `f${i}`, sha256: SHA(i), size: 1 }],
        copies: [],
      });
      keeper.answered(`k${i}`, [`f${i}`], true);
      keeper.settle(`f${i}`, SHA(i));
      timers.fire(); // each interval over while the first save is still being written
    }
    gated.open();
    await keeper.close();
    // The first save, then one with everything since (not one per interval, each a copy of the base).
    expect(gated.saved).toEqual([
      { files: 1, paths: 1 },
      { files: 21, paths: 20 },
    ]);
    expect(gated.removed.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i + 1}`).sort());
  });
});
