import { combineWeightsOf, type DispatchInput, type EpConfig, type RankInput } from "@switchyard/core";

/**
 * What a rank hands to `dispatchSend`: its whole input, or with `combineWeights` `home` the input
 * without `topkWeights` (they go to combineRecv; dispatch refuses them).
 */
export function dispatchInputOf(config: EpConfig, input: RankInput): DispatchInput {
  if (combineWeightsOf(config) !== "home") return input;
  const { topkWeights: _, ...rest } = input;
  return rest;
}

/** What a rank hands to `combineRecv`: nothing, or with `combineWeights` `home` its router weights [T, topK]. */
export function combineRecvWeights(config: EpConfig, input: RankInput): Float32Array | undefined {
  return combineWeightsOf(config) === "home" ? input.topkWeights : undefined;
}
