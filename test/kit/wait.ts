/**
 * The kit's one bounded wait: asks `check` until it gives a truthy value (returned), failing after
 * `timeoutMs` with `what` and the last error. A throw counts as not yet (a server not listening
 * yet, a file half written). It asks again after 10 ms, then less and less often up to every 100 ms:
 * a quick condition is seen at once, a slow one does not keep a busy machine busier. Never a
 * fixed sleep: a test waits for the event it needs, with a bound.
 */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = 10;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? "" : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(100, pause * 2);
  }
}
