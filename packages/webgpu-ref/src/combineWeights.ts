import { type CombineWeights, combineWeightsOf, type EpConfig, UnsupportedError } from "@switchyard/core";

/**
 * The combine-weights modes the WGSL combine stages run: both. `expert`: shaders/combine_send.wgsl
 * writes one weighted partial per (token, rank) and combine_recv.wgsl sums them in rank order.
 * `home`: combine_send.wgsl writes every (token, slot) row unweighted and combine_recv.wgsl
 * weights them with the weights passed to combineRecv and sums them in slot order.
 */
export const WEBGPU_COMBINE_WEIGHTS: readonly CombineWeights[] = Object.freeze(["expert", "home"] as const);

/** Throws UnsupportedError naming the config's combineWeights unless the WGSL stages run it. */
export function checkCombineWeights(config: Pick<EpConfig, "combineWeights">): void {
  const mode = combineWeightsOf(config);
  if (!WEBGPU_COMBINE_WEIGHTS.includes(mode)) {
    throw new UnsupportedError(
      "webgpu",
      `combineWeights "${String(mode)}" (EpConfig.combineWeights): its WGSL combine stages run ${WEBGPU_COMBINE_WEIGHTS.join(" and ")} only; leave combineWeights out or set it to one of those, or use the reference backend`,
    );
  }
}
