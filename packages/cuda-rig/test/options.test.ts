import { defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { cudaBackend } from "../src/backend.js";
import { CUDA_VARIANTS, cudaOptionsFromEnv, mergeCudaOptions } from "../src/options.js";
import { cudaVariant } from "../src/variant.js";

describe("cuda backend options", () => {
  it("cudaOptionsFromEnv reads the command lines' variables and nothing else does", () => {
    expect(cudaOptionsFromEnv({})).toEqual({ runtime: {} });
    expect(
      cudaOptionsFromEnv({
        SWITCHYARD_CUDA_OUTPUT: "exact",
        SWITCHYARD_CUDA_RANKS_PER_GPU: "2",
        SWITCHYARD_CUDA_POINTER_CHECKS: "0",
        SWITCHYARD_CONTIGUOUS_BLOCKS: "8",
      }),
    ).toEqual({ output: "exact", ranksPerGpu: 2, runtime: { pointerChecks: false, contiguousBlocks: 8 } });
    expect(() => cudaOptionsFromEnv({ SWITCHYARD_CUDA_OUTPUT: "big" })).toThrow(/SWITCHYARD_CUDA_OUTPUT=big/);
    expect(() => cudaOptionsFromEnv({ SWITCHYARD_CUDA_RANKS_PER_GPU: "0" })).toThrow(/RANKS_PER_GPU=0/);
    expect(cudaOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: "1" })).toEqual({
      runtime: { kernelPerHalf: true },
    });
    expect(() => cudaOptionsFromEnv({ SWITCHYARD_CUDA_KERNEL_PER_HALF: "on" })).toThrow(
      /SWITCHYARD_CUDA_KERNEL_PER_HALF="on"/,
    );
  });

  it("a backend's capabilities follow its ranksPerGpu option", () => {
    const one = cudaBackend({ ranksPerGpu: 1 }).capabilities.maxRanks;
    expect(cudaBackend({ ranksPerGpu: 3 }).capabilities.maxRanks).toBe(one * 3);
    expect(() => cudaBackend({ ranksPerGpu: 0 })).toThrow(/ranksPerGpu 0/);
  });

  it("variants are named backends over the base options; an unknown one lists the known", () => {
    expect(cudaVariant(undefined).name).toBe("cuda");
    expect(cudaVariant("exact").name).toBe("cuda:exact");
    expect(() => cudaVariant("nope")).toThrow(/no variant "nope": the variants are exact, /);
    expect(
      mergeCudaOptions({ ranksPerGpu: 2, runtime: { transport: "put" } }, CUDA_VARIANTS["blocks-1"]),
    ).toEqual({
      ranksPerGpu: 2,
      runtime: { transport: "put", contiguousBlocks: 1 },
    });
    expect(cudaVariant("kernel-per-half").name).toBe("cuda:kernel-per-half");
    expect(mergeCudaOptions({ runtime: { transport: "put" } }, CUDA_VARIANTS["kernel-per-half"])).toEqual({
      runtime: { transport: "put", kernelPerHalf: true },
    });
  });

  it("exact output is refused before anything starts only where it cannot apply: never for masked configs", async () => {
    const masked = defineConfig({ ranks: 1, experts: 2, topK: 1, hidden: 64, maxTokensPerRank: 4 });
    const e = await cudaBackend({ output: "exact" })
      .createSession(masked)
      .catch((x) => x);
    // Here (no GPU build) the session fails for want of the addon, not for the output mode.
    if (e instanceof Error) expect(e.name).not.toBe("UnsupportedError");
  });
});
