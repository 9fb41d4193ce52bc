import { defineConfig, type EpConfig } from "@switchyard/core";
import fc from "fast-check";
import { describe, it } from "vitest";
import { runAgainstReference } from "./helpers.js";

const DTYPES = [
  { inputDtype: "bf16", dispatchDtype: "bf16" },
  { inputDtype: "bf16", dispatchDtype: "fp8-e4m3" },
  { inputDtype: "fp8-e4m3", dispatchDtype: "fp8-e4m3" },
] as const;

/** Small configs: 1-6 ranks, any DP group size, 1-4 local experts, odd and even hidden (bf16). */
function configArb(
  layout: EpConfig["layout"],
  dtypes: (typeof DTYPES)[number],
  extra: Pick<EpConfig, "combineWeights" | "scaleFormat"> = {},
) {
  return fc
    .record({
      ranks: fc.integer({ min: 1, max: 6 }),
      dpPick: fc.nat({ max: 5 }),
      L: fc.integer({ min: 1, max: 4 }),
      topK: fc.integer({ min: 1, max: 6 }),
      hidden: fc.integer({ min: 1, max: 40 }),
      M: fc.integer({ min: 1, max: 9 }),
      expertAlignment: fc.constantFrom(1, 2, 3, 4, 8),
    })
    .map((c) => {
      const dps = Array.from({ length: c.ranks }, (_, i) => i + 1).filter((d) => c.ranks % d === 0);
      const experts = c.ranks * c.L;
      const fp8 = dtypes.dispatchDtype === "fp8-e4m3";
      return defineConfig({
        ranks: c.ranks,
        dpSize: dps[c.dpPick % dps.length],
        experts,
        topK: Math.min(c.topK, experts),
        hidden: fp8 ? 128 * (1 + (c.hidden % 2)) : c.hidden,
        maxTokensPerRank: c.M,
        layout,
        expertAlignment: c.expertAlignment,
        ...dtypes,
        ...extra,
      });
    });
}

describe("WebGPU session matches core's ReferenceSession", () => {
  for (const layout of ["masked", "contiguous"] as const) {
    for (const dtypes of DTYPES) {
      it(`${layout}, ${dtypes.inputDtype} -> ${dtypes.dispatchDtype}: random configs, 3 steps, ranks interleaved`, async () => {
        await fc.assert(
          fc.asyncProperty(configArb(layout, dtypes), fc.nat(), async (config, seed) => {
            await runAgainstReference(config, seed, 3, { heaps: true });
          }),
          { numRuns: 12 },
        );
      });
    }
  }

  for (const dtypes of DTYPES) {
    it(`masked, combineWeights home, ${dtypes.inputDtype} -> ${dtypes.dispatchDtype}: random configs, 3 steps, ranks interleaved`, async () => {
      await fc.assert(
        fc.asyncProperty(
          configArb("masked", dtypes, { combineWeights: "home" }),
          fc.nat(),
          async (config, seed) => {
            await runAgainstReference(config, seed, 3, { heaps: true });
          },
        ),
        { numRuns: 12 },
      );
    });
  }

  // amax scales: the reciprocal's division and every element's product rounded as IEEE does
  // (f32_exact.wgsl); inputs include NaN, infinities, subnormals and the largest bf16 values.
  for (const layout of ["masked", "contiguous"] as const) {
    it(`${layout}, bf16 -> fp8-e4m3, scaleFormat amax: random configs, 3 steps, ranks interleaved`, async () => {
      await fc.assert(
        fc.asyncProperty(
          configArb(layout, DTYPES[1], { scaleFormat: "amax" }),
          fc.nat(),
          async (config, seed) => {
            await runAgainstReference(config, seed, 3, { heaps: true });
          },
        ),
        { numRuns: 12 },
      );
    });
  }

  it("DP groups: every rank of a group gets the group's combined tokens", async () => {
    const config = defineConfig({
      ranks: 6,
      dpSize: 3,
      experts: 12,
      topK: 4,
      hidden: 33,
      maxTokensPerRank: 7,
    });
    await runAgainstReference(config, 7, 3, { heaps: true, tokens: 7 });
    await runAgainstReference({ ...config, layout: "contiguous", expertAlignment: 4 }, 8, 3, { heaps: true });
  });

  it("combine is bit-exact with core on subnormal, infinite and NaN expert outputs too", async () => {
    const config = defineConfig({ ranks: 2, experts: 4, topK: 3, hidden: 31, maxTokensPerRank: 6 });
    await runAgainstReference(config, 21, 3, { specialOutputs: true });
    await runAgainstReference({ ...config, layout: "contiguous" }, 22, 3, { specialOutputs: true });
  });

  it("many steps on one session: nothing from step n reaches step n + 1 (tokens change every step)", async () => {
    const config = defineConfig({ ranks: 3, experts: 6, topK: 2, hidden: 9, maxTokensPerRank: 5 });
    await runAgainstReference(config, 11, 25, { heaps: true });
    await runAgainstReference({ ...config, layout: "contiguous", expertAlignment: 2 }, 12, 25, {
      heaps: true,
    });
  });

  it("heaps split into binding windows (a small maxBindingBytes) give the same bytes", async () => {
    const cases: EpConfig[] = [
      defineConfig({ ranks: 2, experts: 8, topK: 3, hidden: 37, maxTokensPerRank: 6 }),
      defineConfig({
        ranks: 3,
        experts: 6,
        topK: 2,
        hidden: 23,
        maxTokensPerRank: 5,
        layout: "contiguous",
        expertAlignment: 3,
      }),
      defineConfig({
        ranks: 2,
        experts: 4,
        topK: 2,
        hidden: 128,
        maxTokensPerRank: 4,
        dispatchDtype: "fp8-e4m3",
        layout: "contiguous",
      }),
      defineConfig({
        ranks: 2,
        experts: 4,
        topK: 2,
        hidden: 128,
        maxTokensPerRank: 4,
        dispatchDtype: "fp8-e4m3",
      }),
      defineConfig({
        ranks: 2,
        experts: 4,
        topK: 2,
        hidden: 256,
        maxTokensPerRank: 4,
        dispatchDtype: "fp8-e4m3",
        scaleFormat: "amax",
        layout: "contiguous",
      }),
    ];
    for (const [i, config] of cases.entries()) {
      await runAgainstReference(config, 100 + i, 2, { heaps: true, maxBindingBytes: 2048 });
    }
  });
});
