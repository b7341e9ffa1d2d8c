import { defineConfig } from "vitest/config";

/** The web view in a real browser: Debian's chromium driven by playwright-core (npm run test:web). */
export default defineConfig({
  test: {
    include: ["test/server/web/**/*.browser.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser at a time: two on 2 cores make each slower than both in turn.
    fileParallelism: false,
  },
});
