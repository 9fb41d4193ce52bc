import { defineConfig } from "vitest/config";

// Generous timeouts: a test's pass must not depend on how loaded the machine is (a bounds property
// ran past the 5 s default on a shared 2-core machine). Properties bound their own waits (run
// timeouts, the shrinking budget), so these only catch real hangs.
export default defineConfig({
  test: {
    globalSetup: ["../../test-support/tmpGuard.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
