import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real agents' conformance suite and the browser tests have their own configs (npm run
    // test:agents, npm run test:web).
    exclude: ["**/node_modules/**", "test/agents/conformance/**", "test/**/*.browser.test.ts"],
    // Most files wait on child processes and servers, not on the CPU: on a 2-core machine the
    // default (one worker) leaves it idle most of the time.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
