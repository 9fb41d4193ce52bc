import { computeLayout, defineConfig } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { DEFAULT_STAGING_TOKENS, STAGING_ENV, stagingTokensFor } from "../src/staging.js";

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
  it("bounds prefill staging by default and keeps small or masked configs whole", () => {
    expect(stagingTokensFor(prefill, undefined, {})).toBe(DEFAULT_STAGING_TOKENS);
    expect(stagingTokensFor({ ...prefill, maxTokensPerRank: 512 }, undefined, {})).toBe(0);
    expect(stagingTokensFor({ ...prefill, layout: "masked" }, 8, {})).toBe(0);
    const bounded = computeLayout(prefill, { stagingTokens: stagingTokensFor(prefill, undefined, {}) });
    const whole = computeLayout(prefill);
    expect(bounded.stagingRounds).toBe(4);
    // 2 buffers of 1024 tokens instead of 4096: half the staging at M = 4096.
    expect(bounded.regions.dispatchX.bytes * 2).toBe(whole.regions.dispatchX.bytes);
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
