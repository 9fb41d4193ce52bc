import { referenceBackend } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { resolveBackend } from "../src/index.js";

describe("resolveBackend", () => {
  const here = import.meta.dirname;

  it("knows the reference backend by name", async () => {
    expect(await resolveBackend("reference")).toBe(referenceBackend);
  });

  it("loads `backend` or `createBackend()` from a module path", async () => {
    expect((await resolveBackend("./fixtures/backendModule.mjs", here)).name).toBe("fixture-module");
    expect((await resolveBackend("./fixtures/factoryModule.mjs", here)).name).toBe("fixture-heavy-weights");
  });

  it("says what a module should export when it has no backend", async () => {
    await expect(resolveBackend("./fixtures/emptyModule.mjs", here)).rejects.toThrow(/export `backend`/);
    await expect(resolveBackend("./fixtures/missing.mjs", here)).rejects.toThrow(/cannot import/);
  });
});
