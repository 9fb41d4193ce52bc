import { bf16ToNumber, numberToBf16 } from "../codec/bf16.js";
import { combineWeightsOf } from "../combineWeights.js";
import type { EpConfig } from "../config.js";
import { blockPlacement } from "../placement.js";
import { ownerOf } from "../rows.js";
import { type RankInput, tokensOf } from "../tensors.js";

/**
 * The expert output (bf16 bits, [hidden]) for the row that token `srcToken` of `srcRank`
 * sent to global expert `expert` from slot `slot`.
 */
export type ExpertOutputOf = (expert: number, srcRank: number, srcToken: number, slot: number) => Uint16Array;

/** One weighted term of a partial: the router weight and the expert output row (bf16 bits). */
export interface PartialTerm {
  w: number;
  o: ArrayLike<number>;
}

/**
 * One expert rank's partial for one token: acc = +0 (fp32); for each term (its slots on that rank
 * in slot order) acc = fp32(acc + fp32(w * o[h])); partial = bf16(acc). Returns bf16 bits [hidden].
 * With three or more terms the order changes bits. Starting from +0, all-zero or cancelling terms
 * give +0; the partial is -0 only when acc is negative and at most 2^-134 in magnitude (docs/protocol.md).
 */
export function partialOf(hidden: number, terms: readonly PartialTerm[]): Uint16Array {
  const acc = new Float32Array(hidden);
  for (const { w, o } of terms) {
    const wf = Math.fround(w);
    for (let h = 0; h < hidden; h++) acc[h] = Math.fround(acc[h] + Math.fround(wf * bf16ToNumber(o[h])));
  }
  const p = new Uint16Array(hidden);
  for (let h = 0; h < hidden; h++) p[h] = numberToBf16(acc[h]);
  return p;
}

/**
 * The used slots of one token grouped by the rank hosting their expert: `[rank, slots]` pairs in
 * ascending rank order, slots ascending within each.
 */
export function slotsByRank(
  topkIdx: ArrayLike<number>,
  rankOf: (expert: number) => number,
): [number, number[]][] {
  const byRank = new Map<number, number[]>();
  for (let k = 0; k < topkIdx.length; k++) {
    if (topkIdx[k] < 0) continue;
    const r = rankOf(topkIdx[k]);
    const list = byRank.get(r);
    if (list) list.push(k);
    else byRank.set(r, [k]);
  }
  return [...byRank.entries()].sort((a, b) => a[0] - b[0]);
}

/**
 * The home's sum of one token's partials: acc = +0 (fp32); for each partial in ascending rank
 * order acc = fp32(acc + partial[h]); y[h] = bf16(acc), rounded once. Never -0: partials that are
 * all -0, that cancel, or none at all give +0 (a sum started from the first partial, or from -0,
 * would give -0 for the first).
 */
export function sumPartials(hidden: number, partials: readonly ArrayLike<number>[]): Uint16Array {
  const acc = new Float32Array(hidden);
  for (const p of partials)
    for (let h = 0; h < hidden; h++) acc[h] = Math.fround(acc[h] + bf16ToNumber(p[h]));
  const y = new Uint16Array(hidden);
  for (let h = 0; h < hidden; h++) y[h] = numberToBf16(acc[h]);
  return y;
}

/**
 * The combine rule for one token (protocol version 2): each expert rank sums its slots in slot
 * order in fp32 and rounds the partial to bf16 (`partialOf`); the home sums the partials in
 * ascending rank order in fp32 and rounds once to bf16 (`sumPartials`).
 */
export function combineToken(
  hidden: number,
  topkIdx: ArrayLike<number>,
  weights: ArrayLike<number>,
  rankOf: (expert: number) => number,
  outputs: (slot: number) => ArrayLike<number>,
): Uint16Array {
  const partials = slotsByRank(topkIdx, rankOf).map(([, slots]) =>
    partialOf(
      hidden,
      slots.map((k) => ({ w: weights[k], o: outputs(k) })),
    ),
  );
  return sumPartials(hidden, partials);
}

/**
 * The combine rule for one token with `combineWeights` `home`: the home weights every used slot's
 * unweighted expert output itself, in ascending slot order, with one fp32 accumulator from +0:
 * acc = fp32(acc + fp32(w_k * o_k[h])) for each k with topkIdx[k] >= 0; y[h] = bf16(acc), rounded
 * once (`partialOf` over all the token's used slots). Unused (-1) slots are skipped, whatever
 * their weight. No partial is rounded to bf16 on the way, and the ranks hosting the slots play no
 * part in the order. Like the expert rule, y is -0 only when acc is negative and at most 2^-134.
 */
export function combineTokenAtHome(
  hidden: number,
  topkIdx: ArrayLike<number>,
  weights: ArrayLike<number>,
  outputs: (slot: number) => ArrayLike<number>,
): Uint16Array {
  const terms: PartialTerm[] = [];
  for (let k = 0; k < topkIdx.length; k++) if (topkIdx[k] >= 0) terms.push({ w: weights[k], o: outputs(k) });
  return partialOf(hidden, terms);
}

/**
 * Combine over all ranks: y[rank] is [T, hidden] bf16 bits. Every rank of a DP group gets the
 * whole group's result. Expert outputs come from `outputOf`, keyed by the row's provenance.
 * With `combineWeights` `expert` each rank's `topkWeights` are the weights it dispatched
 * (`combineToken`); with `home` they are the weights the rank passes to `combineRecv`
 * (`combineTokenAtHome`), each rank of a DP group applying its own.
 */
export function referenceCombine(
  config: EpConfig,
  inputs: RankInput[],
  outputOf: ExpertOutputOf,
): Uint16Array[] {
  const K = config.topK;
  const H = config.hidden;
  const placement = blockPlacement(config);
  const home = combineWeightsOf(config) === "home";
  return inputs.map((input, rank) => {
    const T = tokensOf(config, input);
    const y = new Uint16Array(T * H);
    for (let t = 0; t < T; t++) {
      const src = ownerOf(config, rank, t);
      const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
      const w = input.topkWeights.subarray(t * K, (t + 1) * K);
      const out = (k: number) => outputOf(idx[k], src, t, k);
      y.set(
        home ? combineTokenAtHome(H, idx, w, out) : combineToken(H, idx, w, placement.rankOf, out),
        t * H,
      );
    }
    return y;
  });
}
