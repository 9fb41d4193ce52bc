import type { EpConfig } from "./config.js";
import { ConfigError } from "./errors.js";

/**
 * Where combine applies the router weights (`EpConfig.combineWeights`, docs/protocol.md "Combine"):
 *
 * - `expert` (the default): the weights travel with dispatch (`RankInput.topkWeights`, in the route
 *   records); each expert rank sums its slots of a token, weighted, into one bf16 partial per
 *   (token, rank) and the home sums the partials in ascending rank order.
 * - `home`: dispatch carries no weights; the expert rank sends every (token, slot) row back
 *   unweighted, and the home rank weights and sums them in ascending slot order with the weights
 *   passed to `combineRecv`. The masked layout only (the low-latency API whose callers pass
 *   weights to combine).
 */
export type CombineWeights = "expert" | "home";

export const COMBINE_WEIGHTS: readonly CombineWeights[] = ["expert", "home"];

/** The mode of a config that leaves `combineWeights` out. */
export const DEFAULT_COMBINE_WEIGHTS: CombineWeights = "expert";

/** A config's combine-weights mode: its `combineWeights`, or `expert` when left out. */
export function combineWeightsOf(config: { combineWeights?: CombineWeights }): CombineWeights {
  return config.combineWeights ?? DEFAULT_COMBINE_WEIGHTS;
}

/** Refuses a `combineWeights` that is not a mode, or `home` with the contiguous layout, with a `ConfigError`. */
export function checkCombineWeights(config: EpConfig): void {
  if (!COMBINE_WEIGHTS.includes(config.combineWeights as CombineWeights)) {
    throw new ConfigError(
      "combineWeights",
      config.combineWeights,
      `must be one of ${COMBINE_WEIGHTS.join(", ")} (or left out for expert)`,
    );
  }
  if (config.combineWeights === "home" && config.layout !== "masked") {
    throw new ConfigError(
      "combineWeights",
      config.combineWeights,
      `"home" needs the masked layout, and layout is ${config.layout}: a row per (token, expert) back suits decode batches only; pass the weights to dispatch (leave combineWeights out, or set it to "expert")`,
    );
  }
}
