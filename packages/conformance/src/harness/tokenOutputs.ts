import {
  blockPlacement,
  type EpConfig,
  type ExpertOutputOf,
  type RankInput,
  slotsByRank,
} from "@switchyard/core";

/** One token's expert output rows, made from its slots grouped by rank and its weights: [K][hidden] bf16. */
export type TokenRowsMaker = (
  ranks: ReturnType<typeof slotsByRank>,
  weights: Float32Array,
  token: number,
) => Uint16Array[];

/**
 * Expert outputs made a whole token at a time (all K rows at once, so they can depend on each
 * other, e.g. cancel within a rank's partial), cached per (source rank, token). Keyed by
 * provenance, as `ExpertOutputOf`.
 */
export function tokenOutputs(config: EpConfig, inputs: RankInput[], make: TokenRowsMaker): ExpertOutputOf {
  const K = config.topK;
  const { rankOf } = blockPlacement(config);
  const rows = new Map<string, Uint16Array[]>();
  return (_g, src, token, slot) => {
    const key = `${src}:${token}`;
    let tokenRows = rows.get(key);
    if (!tokenRows) {
      const idx = inputs[src].topkIdx.subarray(token * K, (token + 1) * K);
      const w = inputs[src].topkWeights.subarray(token * K, (token + 1) * K);
      tokenRows = make(slotsByRank(idx, rankOf), w, token);
      rows.set(key, tokenRows);
    }
    return tokenRows[slot];
  };
}
