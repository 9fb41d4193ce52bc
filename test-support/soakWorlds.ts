/**
 * The worlds the soak tests of core (reference backend) and webgpu-ref cycle through: both layouts,
 * every dtype pair, DP groups, hidden sizes that are not multiples of 128. Plain fields; each test
 * passes them through its own package's `defineConfig`.
 */
export const SOAK_WORLDS = [
  { ranks: 4, experts: 16, topK: 4, hidden: 40, maxTokensPerRank: 6 },
  {
    ranks: 4,
    dpSize: 2,
    experts: 8,
    topK: 3,
    hidden: 128,
    maxTokensPerRank: 5,
    dispatchDtype: "fp8-e4m3",
    layout: "contiguous",
    expertAlignment: 4,
  },
  {
    ranks: 2,
    experts: 6,
    topK: 6,
    hidden: 128,
    maxTokensPerRank: 4,
    inputDtype: "fp8-e4m3",
    dispatchDtype: "fp8-e4m3",
  },
  { ranks: 3, experts: 9, topK: 2, hidden: 33, maxTokensPerRank: 7, layout: "contiguous" },
] as const;
