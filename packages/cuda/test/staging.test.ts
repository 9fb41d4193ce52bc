import { computeLayout, defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_STAGING_BUDGET,
  DEFAULT_STAGING_TOKENS,
  endpointLayout,
  STAGING_ENV,
  stagingTokensFor,
} from "../src/staging.js";

const prefill = defineConfig({
  ranks: 4,
  experts: 256,
  topK: 8,
  hidden: 7168,
  maxTokensPerRank: 4096,
  layout: "contiguous",
  dispatchDtype: "fp8-e4m3",
});

describe("stagingTokensFor (the contiguous layout's bounded staging)", () => {
  it("bounds staging by default only where a whole step's would pass the budget", () => {
    // 4096 tokens: 4 x 32768 rows x 7408 B = 971 MB, under 1 GiB: whole.
    expect(stagingTokensFor(prefill, undefined, {})).toBe(0);
    const big = { ...prefill, maxTokensPerRank: 8192 };
    expect(stagingTokensFor(big, undefined, {})).toBe(DEFAULT_STAGING_TOKENS);
    expect(stagingTokensFor({ ...prefill, layout: "masked" }, 8, {})).toBe(0);
    const bounded = computeLayout(big, { stagingTokens: stagingTokensFor(big, undefined, {}) });
    const whole = computeLayout(big);
    expect(bounded.stagingRounds).toBe(8);
    // 2 buffers of 1024 tokens instead of 8192: a quarter of the staging at M = 8192.
    expect(bounded.regions.dispatchX.bytes * 4).toBe(whole.regions.dispatchX.bytes);
    expect(whole.regions.dispatchX.bytes).toBeGreaterThan(DEFAULT_STAGING_BUDGET);
    // What endpoints allocate and what heaps and memory reports are sized from.
    expect(endpointLayout(big, undefined, {})).toEqual(bounded);
    expect(endpointLayout(big, 0, {})).toEqual(whole);
    expect(endpointLayout(prefill, undefined, { [STAGING_ENV]: "512" }).stagingRounds).toBe(8);
  });

  it("takes the option first, then the environment, and refuses what is not a token count", () => {
    expect(stagingTokensFor(prefill, 16, { [STAGING_ENV]: "64" })).toBe(16);
    expect(stagingTokensFor(prefill, undefined, { [STAGING_ENV]: "64" })).toBe(64);
    expect(stagingTokensFor(prefill, undefined, { [STAGING_ENV]: "0" })).toBe(0);
    expect(() => stagingTokensFor(prefill, undefined, { [STAGING_ENV]: "lots" })).toThrow(
      /SWITCHYARD_CUDA_STAGING_TOKENS=lots: must be a whole number/,
    );
    expect(() => stagingTokensFor(prefill, -2, {})).toThrow(RangeError);
  });
});
