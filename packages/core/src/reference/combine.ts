import { bf16ToNumber, numberToBf16 } from "../codec/bf16.js";
import type { EpConfig } from "../config.js";
import { ownerOf } from "../rows.js";
import { type RankInput, tokensOf } from "../tensors.js";

/**
 * The expert output (bf16 bits, [hidden]) for the row that token `srcToken` of `srcRank`
 * sent to global expert `expert` from slot `slot`.
 */
export type ExpertOutputOf = (expert: number, srcRank: number, srcToken: number, slot: number) => Uint16Array;

/**
 * The combine rule for one token: acc = 0 (fp32); for k = 0..K-1 with topkIdx[k] >= 0,
 * acc = fp32(acc + fp32(w[k] * out_k[h])); y[h] = bf16(acc) (round to nearest even, once).
 */
export function combineToken(
  hidden: number,
  topkIdx: ArrayLike<number>,
  weights: ArrayLike<number>,
  outputs: (slot: number) => Uint16Array,
): Uint16Array {
  const acc = new Float32Array(hidden);
  for (let k = 0; k < topkIdx.length; k++) {
    if (topkIdx[k] < 0) continue;
    const w = Math.fround(weights[k]);
    const o = outputs(k);
    for (let h = 0; h < hidden; h++) acc[h] = Math.fround(acc[h] + Math.fround(w * bf16ToNumber(o[h])));
  }
  const y = new Uint16Array(hidden);
  for (let h = 0; h < hidden; h++) y[h] = numberToBf16(acc[h]);
  return y;
}

/**
 * Combine over all ranks: y[rank] is [T, hidden] bf16 bits. Every rank of a DP group gets the
 * whole group's result. Expert outputs come from `outputOf`, keyed by the row's provenance.
 */
export function referenceCombine(
  config: EpConfig,
  inputs: RankInput[],
  outputOf: ExpertOutputOf,
): Uint16Array[] {
  const K = config.topK;
  const H = config.hidden;
  return inputs.map((input, rank) => {
    const T = tokensOf(config, input);
    const y = new Uint16Array(T * H);
    for (let t = 0; t < T; t++) {
      const src = ownerOf(config, rank, t);
      const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
      const w = input.topkWeights.subarray(t * K, (t + 1) * K);
      y.set(
        combineToken(H, idx, w, (k) => outputOf(idx[k], src, t, k)),
        t * H,
      );
    }
    return y;
  });
}
