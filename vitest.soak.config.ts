import { defineConfig } from "vitest/config";

// `npm run soak`: the reliability suite at full strength. The fault matrix takes the server down
// for the real 30 s, and the fuzzers run many more cases (see test/reliability/harness.ts SOAK).
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    env: { USPARK_SOAK: "1" },
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
