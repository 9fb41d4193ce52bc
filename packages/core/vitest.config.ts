import { defineConfig } from "vitest/config";

// --expose-gc: the soak and create/destroy tests force a collection before they read memory.
// Generous timeouts: a test's pass must not depend on how loaded the machine is.
export default defineConfig({
  test: {
    globalSetup: ["../../test-support/tmpGuard.ts"],
    pool: "forks",
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
