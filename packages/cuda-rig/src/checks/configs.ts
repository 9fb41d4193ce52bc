import { defineConfig, type EpConfig } from "@switchyard/core";

/**
 * The configs the GPU checks run at `ranks` ranks (checks, checks --layout contiguous, baseline):
 * bf16 passthrough, a hidden size that is not a multiple of 8 (the kernels' narrow-vector paths),
 * bf16 -> fp8 quantisation, fp8 input, DP groups; contiguous adds expert alignments, a world
 * large enough that the route takes two chunks (M 700) with alignment 128 as in the bench, and
 * the bench's rows (hidden 7168): bf16 rows of 14 KB, which the receive's fan-out copies through
 * its 8 KB buffer in two bulk copies when a warp holds a whole row (M 512) and from 2 KB into the
 * row when few rows are spread over the warps (M 8), and fp8 rows of 8,320 bytes (a 128-byte
 * second copy), and 4,096 small rows (M 4096): more records than one round of the receive's warps,
 * so its warps go round again (claiming their next record with two ranks or more, stepping by the
 * grid's warps with one). Masked adds the bench's rows too: fp8 dispatch of bf16 input at 128 tokens and
 * bf16 at 8, few enough tokens that the send and the receive cut rows into 512-byte pieces; and
 * such pieces with fp8 input (the caller's scales passed through) at top-12 (the plan's walk of
 * more than 8 slots), and with DP groups.
 */
export function checkConfigs(ranks: number, layout: "masked" | "contiguous"): EpConfig[] {
  const contiguous = layout === "contiguous";
  const a = (n: number) => (contiguous ? n : 1);
  const configs: EpConfig[] = [
    defineConfig({
      ranks,
      experts: 4 * ranks,
      topK: 3,
      hidden: 256,
      maxTokensPerRank: 33,
      layout,
      expertAlignment: a(1),
    }),
    defineConfig({
      ranks,
      experts: 2 * ranks,
      topK: 2,
      hidden: 100,
      maxTokensPerRank: 17,
      layout,
      expertAlignment: a(4),
    }),
    defineConfig({
      ranks,
      experts: 8 * ranks,
      topK: 4,
      hidden: 512,
      maxTokensPerRank: 64,
      dispatchDtype: "fp8-e4m3",
      layout,
      expertAlignment: a(16),
    }),
    defineConfig({
      ranks,
      experts: 2 * ranks,
      topK: 2,
      hidden: 384,
      maxTokensPerRank: 40,
      inputDtype: "fp8-e4m3",
      dispatchDtype: "fp8-e4m3",
      layout,
      expertAlignment: a(8),
    }),
  ];
  if (ranks % 2 === 0) {
    configs.push(
      defineConfig({
        ranks,
        dpSize: 2,
        experts: 2 * ranks,
        topK: 3,
        hidden: 256,
        maxTokensPerRank: 24,
        layout,
        expertAlignment: a(2),
      }),
    );
  }
  // The bench's rows: hidden 7168 at top-8 over 8 experts a rank.
  const benchRows = (over: Partial<EpConfig>) =>
    defineConfig({ ranks, experts: 8 * ranks, topK: 8, hidden: 7168, maxTokensPerRank: 8, layout, ...over });
  if (!contiguous) {
    configs.push(
      benchRows({ maxTokensPerRank: 128, dispatchDtype: "fp8-e4m3" }),
      benchRows({}),
      defineConfig({
        ranks,
        experts: 16 * ranks,
        topK: 12,
        hidden: 2048,
        maxTokensPerRank: 8,
        inputDtype: "fp8-e4m3",
        dispatchDtype: "fp8-e4m3",
        layout,
      }),
    );
    if (ranks % 2 === 0) configs.push(benchRows({ dpSize: 2 }));
  }
  if (contiguous) {
    configs.push(
      defineConfig({
        ranks,
        experts: 8 * ranks,
        topK: 6,
        hidden: 512,
        maxTokensPerRank: 700,
        dispatchDtype: "fp8-e4m3",
        layout,
        expertAlignment: 128,
      }),
      defineConfig({
        ranks,
        experts: 8 * ranks,
        topK: 4,
        hidden: 256,
        maxTokensPerRank: 4096,
        layout,
        expertAlignment: 16,
      }),
      benchRows({ maxTokensPerRank: 512, expertAlignment: 128 }),
      benchRows({ expertAlignment: 16 }),
      defineConfig({
        ranks,
        experts: 8 * ranks,
        topK: 4,
        hidden: 8320,
        maxTokensPerRank: 512,
        dispatchDtype: "fp8-e4m3",
        layout,
        expertAlignment: 64,
      }),
    );
  }
  return configs;
}

/** The baseline's checks: the contiguous configs without DP groups (the baseline runs dpSize 1). */
export function baselineConfigs(ranks: number): EpConfig[] {
  return checkConfigs(ranks, "contiguous").filter((c) => c.dpSize === 1);
}
