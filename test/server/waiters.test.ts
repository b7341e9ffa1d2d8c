import { describe, expect, it } from "vitest";
import { CommitWaiters } from "../../src/server/waiters.js";

/** Settles to "done" or "pending" once the microtasks and timers queued so far have run. */
async function state(promise: Promise<unknown>): Promise<"done" | "pending"> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done ? "done" : "pending";
}

describe("CommitWaiters", () => {
  const never = new AbortController().signal;

  it("wakes a waiter once its project's head passes its version, and not before", async () => {
    const waiters = new CommitWaiters();
    let head = 3;
    const wait = waiters.waitPast("p", 3, 60_000, never, () => head);
    expect(await state(wait)).toBe("pending");
    waiters.committed("p", 3);
    waiters.committed("other", 9);
    expect(await state(wait)).toBe("pending");
    head = 4;
    waiters.committed("p", 4);
    expect(await state(wait)).toBe("done");
    expect(waiters.size).toBe(0);
    expect(waiters.projects()).toEqual([]);
  });

  it("answers at once when the head is past already", async () => {
    const waiters = new CommitWaiters();
    expect(await state(waiters.waitPast("p", 1, 60_000, never, async () => 2))).toBe("done");
    expect(waiters.size).toBe(0);
  });

  it("reads the head again after a wake-up that was not for it, and goes on waiting", async () => {
    const waiters = new CommitWaiters();
    const stop = new AbortController();
    let reads = 0;
    const wait = waiters.waitPast("p", 3, 60_000, stop.signal, () => (reads++, 3));
    await state(wait);
    waiters.committed("p", 4); // e.g. another database's notification
    expect(await state(wait)).toBe("pending");
    expect(reads).toBe(2);
    expect(waiters.size).toBe(1);
    expect(waiters.projects()).toEqual(["p"]);
    stop.abort();
    expect(await state(wait)).toBe("done");
  });

  it("releases a waiter whose signal aborts", async () => {
    const waiters = new CommitWaiters();
    const stop = new AbortController();
    const wait = waiters.waitPast("p", 0, 60_000, stop.signal, () => 0);
    await state(wait);
    expect(waiters.size).toBe(1);
    stop.abort();
    expect(await state(wait)).toBe("done");
    expect(waiters.size).toBe(0);
  });

  it("ends after its time with nothing new", async () => {
    const waiters = new CommitWaiters();
    await waiters.waitPast("p", 0, 20, never, () => 0);
    expect(waiters.size).toBe(0);
  });

  it("releases a waiter whose head cannot be read, and says why", async () => {
    const waiters = new CommitWaiters();
    await expect(waiters.waitPast("p", 0, 60_000, never, () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(waiters.size).toBe(0);
  });
});
