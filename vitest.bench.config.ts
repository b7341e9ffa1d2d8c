import { defineConfig } from "vitest/config";

// `npm run test:bench`: the bench's smoke run (bench/run.mjs --smoke) with its sanity checks, so
// that the bench cannot rot. Out of `npm test`: a whole bench, however small, is some 40 s of the
// two cores' time, and none of its figures are judged; .ci/run runs it as a step of its own.
export default defineConfig({
  test: {
    include: ["test/bench/**/*.test.ts"],
    // The server section's --db runs take the worker's shared PostgreSQL cluster, stopped here.
    globalSetup: ["test/kit/pg-clusters.global.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
