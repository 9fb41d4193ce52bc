import { type CombineWeights, combineWeightsOf, type EpConfig, UnsupportedError } from "@switchyard/core";

/**
 * The combine-weights modes the WGSL combine stages run: `expert` only (shaders/combine_send.wgsl
 * writes one weighted partial per (token, rank), combine_recv.wgsl sums them in rank order). The
 * `home` mode (one unweighted row per (token, slot), weighted at home in slot order) is specified
 * in core but not written in WGSL yet, so it is refused.
 */
export const WEBGPU_COMBINE_WEIGHTS: readonly CombineWeights[] = Object.freeze(["expert"] as const);

/** Throws UnsupportedError naming the config's combineWeights unless the WGSL stages run it. */
export function checkCombineWeights(config: Pick<EpConfig, "combineWeights">): void {
  const mode = combineWeightsOf(config);
  if (!WEBGPU_COMBINE_WEIGHTS.includes(mode)) {
    throw new UnsupportedError(
      "webgpu",
      `combineWeights "${mode}" (EpConfig.combineWeights): its WGSL combine stages weight the outputs on the expert ranks only; leave combineWeights out or set it to "expert" and pass the weights to dispatch, or use the reference backend for ${mode}`,
    );
  }
}
