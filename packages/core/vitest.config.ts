import { defineConfig } from "vitest/config";

// --expose-gc: the soak and create/destroy tests force a collection before they read memory.
export default defineConfig({
  test: {
    pool: "forks",
    poolOptions: { forks: { execArgv: ["--expose-gc"] } },
  },
});
