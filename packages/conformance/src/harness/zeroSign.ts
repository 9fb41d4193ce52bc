import { type EpConfig, type ExpertOutputOf, numberToBf16, type RankInput } from "@switchyard/core";
import { tokenOutputs } from "./tokenOutputs.js";

/** The smallest positive bf16 value (a subnormal). */
const TINY = 2 ** -133;

/**
 * The inputs with every non-zero weight replaced by +-2^-2, 2^-3 or 2^-4 (sign and size from the
 * drawn weight; 0 stays 0): small enough that w * TINY is at most 2^-135, which bf16 rounds to zero.
 */
export function quarterWeights(inputs: RankInput[]): RankInput[] {
  return inputs.map((input) => ({
    ...input,
    topkWeights: input.topkWeights.map((w) =>
      w === 0 ? 0 : Math.sign(w) * 2 ** -(2 + (Math.abs(Math.round(Math.log2(Math.abs(w)))) % 3)),
    ),
  }));
}

/** A signed zero: -0 when `negative`. */
const zero = (negative: boolean) => (negative ? -0 : 0);

/**
 * What one element of a token's used slots returns, for each of its ranks' slots (in ascending rank
 * order, slots in slot order), so that y is zero in one of four ways (picked by the element and
 * the token):
 * 0. every partial is -0: on each rank the first slot with a non-zero weight gives w * o =
 *    -|w| 2^-133 (at most 2^-135 in magnitude), the others signed zeros, so the fp32 sum is a tiny
 *    negative number that bf16 rounds to -0;
 * 1. every product is -0 (o = -0 for w >= 0, +0 for w < 0): partials and y are +0, as both
 *    accumulators start at +0;
 * 2. partials that cancel: +a on the lowest rank, -a on the next (a normal, exact in bf16), the
 *    rest signed zeros; on a token of one rank, two entries of that rank cancel within its partial;
 * 3. signed zeros of mixed signs.
 * Where a token lacks what a way needs (non-zero weights, two ranks or two entries) it takes way 0.
 * Per core's referenceCombine y is +0 in every case; a sum that starts from its first term, or
 * from -0, gives -0 in way 0.
 */
function zeroProducts(
  ranks: [number, number[]][],
  w: ArrayLike<number>,
  h: number,
  token: number,
): number[][] {
  const carriers = ranks.map(([, slots]) => slots.filter((k) => w[k] !== 0));
  const carried = carriers.flat();
  let way = (h + token) % 4;
  if (way === 2 && carried.length < 2) way = 0;
  const a = (1 + (h % 4) / 4) * 2 ** ((h + token) % 5);
  const twoRanks = carriers.filter((c) => c.length > 0).length >= 2;
  const plus = twoRanks ? carriers.find((c) => c.length > 0)![0] : carried[0];
  const minus = twoRanks ? carriers.filter((c) => c.length > 0)[1][0] : carried[1];
  return ranks.map(([, slots], r) =>
    slots.map((k) => {
      if (way === 0) return k === carriers[r][0] ? -Math.abs(w[k]) * TINY : zero((k + h) % 2 === 1);
      if (way === 1) return -0;
      if (way === 2) return k === plus ? a : k === minus ? -a : zero((k + h) % 2 === 0);
      return zero((k + h + token) % 3 === 0);
    }),
  );
}

/**
 * Expert outputs whose combined y is zero for every element, in the ways `zeroProducts` lists:
 * the sign of y's zeros is what is checked. Weights must come from `quarterWeights`, so that
 * o = product / w is exact (a -0 product comes from o = -0 for w >= 0, +0 for w < 0). Keyed by
 * provenance, as `ExpertOutputOf`.
 */
export function zeroSignOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const H = config.hidden;
  return tokenOutputs(config, inputs, (ranks, w, token) => {
    const made = Array.from({ length: config.topK }, () => new Uint16Array(H));
    for (let h = 0; h < H; h++) {
      const products = zeroProducts(ranks, w, h, token);
      ranks.forEach(([, slots], r) => {
        slots.forEach((k, m) => {
          const p = products[r][m];
          // o = p / w; a zero product takes the sign that makes w * o that zero (w = 0: o's own sign).
          const o = p !== 0 ? p / w[k] : w[k] < 0 ? -p : p;
          made[k][h] = numberToBf16(o);
        });
      });
    }
    return made;
  });
}
