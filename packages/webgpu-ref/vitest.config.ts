import { defineConfig } from "vitest/config";

// One process per test file (Dawn's native addon is not meant for worker threads), one file at a
// time: lavapipe already spreads each dispatch over the CPU's cores. --expose-gc: the soak and
// create/destroy tests force a collection before they read memory.
export default defineConfig({
  test: {
    globalSetup: ["../../test-support/tmpGuard.ts"],
    pool: "forks",
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
