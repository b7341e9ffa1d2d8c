import { defineConfig } from "vitest/config";

// `npm run soak`: the reliability suite at full strength. The fault matrix takes the server down
// for the real 30 s, and the fuzzers run many more cases (see test/reliability/harness.ts SOAK);
// the many-writers simulation runs 1,000,000 seeds (10-15 ms each on one core, measured 2026-12-02:
// 3 to 4 hours).
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts", "test/reconcile/simulation.test.ts"],
    env: { USPARK_SOAK: "1", SIM_SEEDS: "1000000" },
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
