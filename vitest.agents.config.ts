import { defineConfig } from "vitest/config";

/** The conformance suite: the real agents from test/agents/node_modules (npm run test:agents). */
export default defineConfig({
  test: {
    include: ["test/agents/conformance/**/*.conformance.ts"],
    testTimeout: 240_000,
    hookTimeout: 240_000,
    // One agent at a time: run side by side on 2 cores, the Node-based ones time out.
    fileParallelism: false,
  },
});
