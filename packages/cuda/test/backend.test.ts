import { BackendUnavailableError, defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { cudaBackend, cudaCapabilities } from "../src/backend.js";
import { tryLoad } from "../src/native/loader.js";

describe("cudaBackend without a GPU build", () => {
  it("declares the masked layout only, and maxRanks = visible GPUs", () => {
    const caps = cudaCapabilities(3, {});
    expect(caps.layouts).toEqual(["masked"]);
    expect(caps.maxRanks).toBe(3);
    expect(caps.deterministicRowOrder).toBe(true);
    expect(caps.dispatchDtypes).toEqual(["bf16", "fp8-e4m3"]);
  });

  it("the loader collects every failure into one reason and never throws", () => {
    const r = tryLoad(["/nonexistent/a.node", "/nonexistent/b.node"]);
    expect(r.addon).toBeNull();
    expect(r.reason).toMatch(/^native addon not built: run `npm run build:native -w @switchyard\/cuda`/);
    expect(r.reason).toContain("/nonexistent/a.node: not found; /nonexistent/b.node: not found");
  });

  it("a file that is not an addon is reported as a load failure", () => {
    const r = tryLoad([new URL("../package.json", import.meta.url).pathname]);
    expect(r.reason).toMatch(/^native addon failed to load/);
  });

  it("unavailableReason answers (string or null) without throwing", async () => {
    const reason = await cudaBackend.unavailableReason();
    expect(reason === null || typeof reason === "string").toBe(true);
  });

  it("declares the contiguous layout only with SWITCHYARD_CUDA_CONTIGUOUS=1 (not yet run on a GPU)", () => {
    expect(cudaCapabilities(2, { SWITCHYARD_CUDA_CONTIGUOUS: "1" }).layouts).toEqual([
      "masked",
      "contiguous",
    ]);
    expect(cudaCapabilities(2, { SWITCHYARD_CUDA_CONTIGUOUS: "0" }).layouts).toEqual(["masked"]);
  });

  it("declares per-peer stats only with SWITCHYARD_CUDA_STATS=1 (wait stamps not yet run on a GPU)", () => {
    expect(cudaCapabilities(2, {}).stats).toBe(false);
    expect(cudaCapabilities(2, { SWITCHYARD_CUDA_STATS: "1" }).stats).toBe(true);
  });

  it.skipIf(process.env.SWITCHYARD_CUDA_CONTIGUOUS === "1")(
    "refuses the contiguous layout with UnsupportedError before anything starts (without the switch)",
    async () => {
      const config = defineConfig({
        ranks: 2,
        experts: 4,
        topK: 2,
        hidden: 64,
        maxTokensPerRank: 4,
        layout: "contiguous",
      });
      await expect(cudaBackend.createSession(config)).rejects.toThrow(/SWITCHYARD_CUDA_CONTIGUOUS=1/);
    },
  );

  it("reports itself unavailable with the reason when it cannot run here", async () => {
    const reason = await cudaBackend.unavailableReason();
    const config = defineConfig({ ranks: 1, experts: 2, topK: 1, hidden: 64, maxTokensPerRank: 4 });
    if (reason === null) return; // a GPU machine with the addon built: gpu.test.ts covers it
    const e = await cudaBackend.createSession(config).catch((x) => x);
    expect(e).toBeInstanceOf(BackendUnavailableError);
    expect(e.message).toContain(reason);
  });
});
