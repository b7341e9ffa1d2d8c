import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real agents' conformance suite has its own config (npm run test:agents).
    exclude: ["**/node_modules/**", "test/agents/conformance/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
