import { type CombineWeights, combineWeightsOf, type EpConfig, UnsupportedError } from "@switchyard/core";

/**
 * The combine-weights modes the kernels run: `expert` only (combine send writes one weighted bf16
 * partial per (token, rank), combine recv sums them in rank order). The `home` mode (one unweighted
 * row per (token, slot) into combineX [M, K, H], weighted at the home in slot order with the
 * weights `combineRecv` takes) is specified in core; its kernels are not written yet, so
 * capabilities declare `expert` alone and every entry point refuses `home`.
 */
export const CUDA_COMBINE_WEIGHTS: readonly CombineWeights[] = Object.freeze(["expert"] as const);

/**
 * Throws UnsupportedError naming the config's combineWeights unless the kernels run it. Called by
 * `RankEndpoint.create` and the session adapter before anything is allocated.
 */
export function checkCombineWeights(config: Pick<EpConfig, "combineWeights">): void {
  const mode = combineWeightsOf(config);
  if (!CUDA_COMBINE_WEIGHTS.includes(mode)) {
    throw new UnsupportedError(
      "cuda",
      `combineWeights "${mode}" (EpConfig.combineWeights): its kernels apply the router weights on the expert ranks only; leave combineWeights out or set it to "expert" and pass topkWeights to dispatch, or use the reference backend for ${mode}`,
    );
  }
}
