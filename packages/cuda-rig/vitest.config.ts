import { defineConfig } from "vitest/config";

// Generous timeouts: a test's pass must not depend on how loaded the machine is (the default 5 s
// is easily exceeded on a shared 2-core machine). Every wait a test exercises has its own, much
// shorter bound, so these only catch real hangs.
export default defineConfig({
  test: {
    globalSetup: ["../../test-support/tmpGuard.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
