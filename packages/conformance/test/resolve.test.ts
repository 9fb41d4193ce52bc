import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { referenceBackend } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";
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

  it("finds a package name from the caller's folder (its node_modules), not only from here", async () => {
    const project = tempDir("switchyard-vendor-");
    const pkg = join(project, "node_modules", "vendor-backend");
    await mkdir(pkg, { recursive: true });
    await writeFile(
      join(pkg, "package.json"),
      JSON.stringify({ name: "vendor-backend", type: "module", exports: "./index.js" }),
    );
    await writeFile(
      join(pkg, "index.js"),
      'export const backend = { name: "vendor", capabilities: {}, unavailableReason: async () => null, createSession: async () => null };\n',
    );
    expect((await resolveBackend("vendor-backend", project)).name).toBe("vendor");
    await expect(resolveBackend("vendor-backend", here)).rejects.toThrow(
      /unknown backend "vendor-backend": the known names are reference;/,
    );
  });
});
