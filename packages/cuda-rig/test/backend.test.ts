import { BackendUnavailableError, defineConfig, type EpConfig, UnsupportedError } from "@switchyard/core";
import { checkLayout } from "@switchyard/cuda";
import { describe, expect, it } from "vitest";
import { cudaBackend, cudaCapabilities } from "../src/backend.js";

/** Why the backend cannot run here; null on a GPU machine with the addon built (gpu.test.ts runs there). */
const reason = await cudaBackend().unavailableReason();
const onGpu = reason === null ? " (skipped: the backend runs here; gpu.test.ts covers it)" : "";

describe("cudaBackend without a GPU build", () => {
  it("declares maxRanks = visible GPUs, deterministic row order and both dispatch dtypes", () => {
    const caps = cudaCapabilities(3);
    expect(caps.maxRanks).toBe(3);
    expect(caps.deterministicRowOrder).toBe(true);
    expect(caps.dispatchDtypes).toEqual(["bf16", "fp8-e4m3"]);
  });

  it("unavailableReason answers (string or null) without throwing", async () => {
    const reason = await cudaBackend().unavailableReason();
    expect(reason === null || typeof reason === "string").toBe(true);
  });

  it("declares both layouts and per-peer stats, and refuses an unknown layout naming it", () => {
    const caps = cudaCapabilities(2);
    expect(caps.layouts).toEqual(["masked", "contiguous"]);
    expect(caps.stats).toBe(true);
    expect(() => checkLayout("masked")).not.toThrow();
    expect(() => checkLayout("contiguous")).not.toThrow();
    expect(() => checkLayout("blocked")).toThrow(UnsupportedError);
    expect(() => checkLayout("blocked")).toThrow("backend cuda does not support the blocked layout");
  });

  it("declares the three scale formats and both combine-weights modes the kernels compute", () => {
    expect(cudaCapabilities(2).scaleFormats).toEqual(["pow2", "amax", "ue8m0"]);
    expect(cudaCapabilities(2).combineWeights).toEqual(["expert", "home"]);
  });

  it("createSession refuses an unknown layout before anything starts", async () => {
    const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });
    const unknown = { ...config, layout: "blocked" } as unknown as EpConfig;
    await expect(cudaBackend().createSession(unknown)).rejects.toThrow(/blocked/);
  });

  it.skipIf(reason === null)(
    `createSession accepts the contiguous layout, then finds no GPU${onGpu}`,
    async () => {
      const config = defineConfig({
        ranks: 2,
        experts: 4,
        topK: 2,
        hidden: 64,
        maxTokensPerRank: 4,
        layout: "contiguous",
      });
      const e = await cudaBackend()
        .createSession(config)
        .catch((x) => x);
      expect(e).not.toBeInstanceOf(UnsupportedError);
      expect(e).toBeInstanceOf(BackendUnavailableError);
    },
  );

  it.skipIf(reason === null)(
    `reports itself unavailable with the reason when it cannot run here${onGpu}`,
    async () => {
      const config = defineConfig({ ranks: 1, experts: 2, topK: 1, hidden: 64, maxTokensPerRank: 4 });
      const e = await cudaBackend()
        .createSession(config)
        .catch((x) => x);
      expect(e).toBeInstanceOf(BackendUnavailableError);
      expect(e.message).toContain(reason as string);
    },
  );
});
