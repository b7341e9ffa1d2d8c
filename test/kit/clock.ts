export interface TestClock {
  /** Real time plus every advance so far (epoch ms): give it to startServer as `now`. */
  now: () => number;
  /** Moves the clock `ms` forward: an expiry is passed without waiting for it. */
  advance(ms: number): void;
}

/** A clock for the server's `now` option that a test moves past an expiry instead of sleeping. */
export function testClock(): TestClock {
  let ahead = 0;
  return { now: () => Date.now() + ahead, advance: (ms) => void (ahead += ms) };
}
