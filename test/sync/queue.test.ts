import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChangeQueue } from "../../src/sync/queue.js";

/** A flush that records batches and can be held open until released. */
function recorder() {
  const batches: [string, number][][] = [];
  let hold: (() => void) | undefined;
  let holding = false;
  return {
    batches,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      hold?.();
      hold = undefined;
    },
    flush: async (batch: Map<string, number>) => {
      batches.push([...batch]);
      if (holding) await new Promise<void>((r) => (hold = r));
    },
  };
}

describe("ChangeQueue", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("coalesces changes per key; the last value wins", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 300, maxWaitMs: 2000, flush: r.flush });
    for (let i = 0; i < 20; i++) {
      q.add("a.ts", i);
      await vi.advanceTimersByTimeAsync(5);
    }
    q.add("b.ts", 1);
    expect(r.batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(300);
    expect(r.batches).toEqual([
      [
        ["a.ts", 19],
        ["b.ts", 1],
      ],
    ]);
  });

  it("flushes after debounceMs of quiet, not before", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 300, maxWaitMs: 2000, flush: r.flush });
    q.add("a", 1);
    await vi.advanceTimersByTimeAsync(299);
    expect(r.batches).toHaveLength(0);
    q.add("b", 1); // restarts the quiet period
    await vi.advanceTimersByTimeAsync(299);
    expect(r.batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(r.batches).toHaveLength(1);
  });

  it("flushes maxWaitMs after the batch's first change even if changes keep coming", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 300, maxWaitMs: 1000, flush: r.flush });
    const start = Date.now();
    let flushedAt = -1;
    for (let t = 0; t < 1500; t += 100) {
      q.add(`f${t}`, t);
      await vi.advanceTimersByTimeAsync(100);
      if (flushedAt < 0 && r.batches.length === 1) flushedAt = Date.now() - start;
    }
    expect(flushedAt).toBe(1000);
    expect(r.batches[0]!.map(([k]) => k)).toEqual(Array.from({ length: 10 }, (_, i) => `f${i * 100}`));
  });

  it("keeps one flush in flight; changes during it go to the next batch", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 50, maxWaitMs: 200, flush: r.flush });
    r.hold();
    q.add("a", 1);
    await vi.advanceTimersByTimeAsync(50);
    expect(r.batches).toHaveLength(1);
    expect(q.flushing).toBe(true);
    q.add("a", 2);
    q.add("b", 1);
    await vi.advanceTimersByTimeAsync(1000); // long past due: still waits for the flight
    expect(r.batches).toHaveLength(1);
    expect(q.peekInFlight()).toEqual(new Map([["a", 1]]));
    expect(q.size).toBe(2);
    r.release();
    await vi.advanceTimersByTimeAsync(0); // due already: goes at once
    expect(r.batches).toEqual([
      [["a", 1]],
      [
        ["a", 2],
        ["b", 1],
      ],
    ]);
  });

  it("a batch that came due during a flight waits for its own debounce when not yet due", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 100, maxWaitMs: 1000, flush: r.flush });
    r.hold();
    q.add("a", 1);
    await vi.advanceTimersByTimeAsync(100);
    q.add("b", 1);
    r.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(r.batches).toHaveLength(2);
  });

  it("drain() flushes at once, including changes added while draining, and resolves when idle", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 10_000, maxWaitMs: 60_000, flush: r.flush });
    r.hold();
    q.add("a", 1);
    const drained = q.drain();
    let done = false;
    void drained.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(r.batches).toHaveLength(1);
    q.add("b", 1);
    r.release();
    await vi.advanceTimersByTimeAsync(0);
    await drained;
    expect(done).toBe(true);
    expect(r.batches).toEqual([[["a", 1]], [["b", 1]]]);
    expect(q.size).toBe(0);
  });

  it("splits more than maxBatch keys into several batches, flushed without waiting", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 10_000, maxWaitMs: 60_000, maxBatch: 3, flush: r.flush });
    for (let i = 0; i < 7; i++) q.add(`f${i}`, i);
    await vi.advanceTimersByTimeAsync(0);
    expect(r.batches.map((b) => b.length)).toEqual([3, 3]);
    await q.drain();
    expect(r.batches.map((b) => b.length)).toEqual([3, 3, 1]);
  });

  it("a change added by the flush itself (a requeue) waits for the next batch", async () => {
    const batches: string[][] = [];
    let requeued = false;
    const q: ChangeQueue<number> = new ChangeQueue<number>({
      debounceMs: 50,
      maxWaitMs: 200,
      flush: async (batch) => {
        batches.push([...batch.keys()]);
        if (!requeued) {
          requeued = true;
          q.add("a", 2); // synchronously, before any await
        }
      },
    });
    q.add("a", 1);
    await vi.advanceTimersByTimeAsync(50);
    expect(batches).toEqual([["a"]]);
    await vi.advanceTimersByTimeAsync(50);
    expect(batches).toEqual([["a"], ["a"]]);
  });

  it("a throwing flush is reported and the queue goes on", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const q = new ChangeQueue<number>({
      debounceMs: 10,
      maxWaitMs: 100,
      flush: async () => {
        calls++;
        if (calls === 1) throw new Error("boom");
      },
      onError: (e) => errors.push(e),
    });
    q.add("a", 1);
    await vi.advanceTimersByTimeAsync(10);
    q.add("b", 1);
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it("close() stops timers; takePending() hands over what waits", async () => {
    const r = recorder();
    const q = new ChangeQueue<number>({ debounceMs: 10, maxWaitMs: 100, flush: r.flush });
    q.add("a", 1);
    q.close();
    q.add("b", 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(r.batches).toHaveLength(0);
    expect(q.takePending()).toEqual(new Map([["a", 1]]));
  });

  it("waiting(key) tells what waits for one key, not what is in flight, without copying the queue", async () => {
    const r = recorder();
    const q = new ChangeQueue<{ n: number }>({
      debounceMs: 10,
      maxWaitMs: 100,
      flush: async (batch) => r.flush(new Map([...batch].map(([k, v]) => [k, v.n]))),
    });
    const first = { n: 1 };
    q.add("a", first);
    expect(q.waiting("a")).toBe(first); // the queued value itself: no copy is made to answer
    expect(q.waiting("b")).toBeUndefined();
    r.hold();
    await vi.advanceTimersByTimeAsync(10);
    expect(q.waiting("a")).toBeUndefined(); // in flight now
    q.add("a", { n: 2 });
    expect(q.waiting("a")).toEqual({ n: 2 });
    r.release();
  });
});
