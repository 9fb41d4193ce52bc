import { type CombineWeights, combineWeightsOf, type EpConfig, UnsupportedError } from "@switchyard/core";

/**
 * The combine-weights modes the kernels run: `expert` (combine send writes one weighted bf16
 * partial per (token, rank), combine recv sums them in rank order) and `home` (combine send copies
 * one unweighted row per (token, slot) into combineX [M, K, H], combine recv weights and sums them
 * in slot order with the weights `combineRecv` takes; masked layout only, as core rules).
 */
export const CUDA_COMBINE_WEIGHTS: readonly CombineWeights[] = Object.freeze(["expert", "home"] as const);

/**
 * Throws UnsupportedError naming the config's combineWeights unless the kernels run it. Called by
 * `RankEndpoint.create` and the session adapter before anything is allocated.
 */
export function checkCombineWeights(config: Pick<EpConfig, "combineWeights">): void {
  const mode = combineWeightsOf(config);
  if (!CUDA_COMBINE_WEIGHTS.includes(mode)) {
    throw new UnsupportedError(
      "cuda",
      `combineWeights "${mode}" (EpConfig.combineWeights): its kernels run ${CUDA_COMBINE_WEIGHTS.join(" and ")}; use one of them, or the reference backend for ${mode}`,
    );
  }
}
