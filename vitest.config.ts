import { defineConfig } from "vitest/config";

// The real agents' conformance suite, the browser tests and the bench's smoke run have their own
// configs (npm run test:agents, npm run test:web, npm run test:bench).
const EXCLUDE = ["**/node_modules/**", "test/agents/conformance/**", "test/**/*.browser.test.ts", "test/bench/**"];
// Files that replace a module (vi.mock) must have a fresh module graph: everything they import
// would otherwise come from, or leak into, the other files of their worker.
const OWN_MODULES = ["test/fswatch-poll.test.ts"];
// Every Node process reads this file of CA certificates at start (about 45 ms of CPU each, some
// machines set it for their proxies). The suite starts hundreds of them and speaks to 127.0.0.1
// only, over plain HTTP: its children are started without it.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    // include is each project's: a project extending this config would add to it, not replace it.
    exclude: EXCLUDE,
    // Most files wait on child processes and servers, not on the CPU: on a 2-core machine the
    // default (one worker) leaves it idle most of the time.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Transformed modules kept between runs (out of node_modules, which worktrees share).
    experimental: { fsModuleCache: true, fsModuleCachePath: ".vitest-cache" },
    projects: [
      // A worker runs its files one after another in one module graph: vitest and src/ are loaded
      // once per worker, not once per file (a third of a unit test file's CPU time). The files
      // leave nothing behind them: each test owns its temp dirs, servers and stubbed env.
      // Its workers share a PostgreSQL cluster between their files; globalSetup stops them at the end.
      {
        extends: true,
        test: {
          name: "shared",
          isolate: false,
          include: ["test/**/*.test.ts"],
          exclude: OWN_MODULES,
          globalSetup: ["test/kit/pg-clusters.global.ts"],
        },
      },
      { extends: true, test: { name: "own-modules", include: OWN_MODULES } },
    ],
  },
});
