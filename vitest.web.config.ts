import { defineConfig } from "vitest/config";

/** The web view in a real browser: Debian's chromium driven by playwright-core (npm run test:web). */
export default defineConfig({
  test: {
    include: ["test/server/web/**/*.browser.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time: two on 2 cores make each slower than both in turn.
    fileParallelism: false,
    // A test that passes only on its retry is reported as flaky (and says on stderr where its
    // first attempt failed). The hang of "opens every page" past 60 s, seen since the first runs,
    // was the server's close waiting on Chromium's unused preconnect (fixed, 2026-11-26).
    retry: 1,
  },
});
