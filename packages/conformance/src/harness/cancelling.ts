import {
  blockPlacement,
  type EpConfig,
  type ExpertOutputOf,
  numberToBf16,
  type RankInput,
  slotsByRank,
} from "@switchyard/core";

/** Magnitude of the cancelling pair: far above what the other slots add, so fp32 loses them next to it. */
const BIG = 2 ** 40;

/** The inputs with every weight replaced by a power of two of its sign and size (products stay exact). */
export function powerOfTwoWeights(inputs: RankInput[]): RankInput[] {
  return inputs.map((input) => ({
    ...input,
    topkWeights: input.topkWeights.map((w) =>
      w === 0 ? 1 : Math.sign(w) * 2 ** Math.round(Math.log2(Math.abs(w))),
    ),
  }));
}

/**
 * Expert outputs that make the summation order of a token's partials visible. For a token whose
 * slots name three or more ranks, the first slot on its lowest rank returns +2^40 / w and the first
 * slot on its second-lowest rank -2^40 / w (exact with power-of-two weights), so those two
 * partials are +2^40 and -2^40; every other slot returns a small value. In ascending rank order the
 * pair cancels first and the small partials survive; in any order that adds a small partial to
 * one of the pair first, fp32 loses it. Keyed by provenance, as `ExpertOutputOf`.
 */
export function cancellingOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const K = config.topK;
  const H = config.hidden;
  const placement = blockPlacement(config);
  return (g, src, token, slot) => {
    const idx = inputs[src].topkIdx.subarray(token * K, (token + 1) * K);
    const w = inputs[src].topkWeights[token * K + slot];
    const byRank = slotsByRank(idx, placement.rankOf);
    const sign =
      byRank.length >= 3 && slot === byRank[0][1][0]
        ? 1
        : byRank.length >= 3 && slot === byRank[1][1][0]
          ? -1
          : 0;
    const out = new Uint16Array(H);
    for (let h = 0; h < H; h++) {
      const small =
        ((((g + 3) * 7919 + (src + 1) * 104729 + token * 31 + slot * 17 + h * 13) % 251) - 125) / 64;
      out[h] = numberToBf16(sign === 0 ? small : (sign * BIG) / w);
    }
    return out;
  };
}
