import { type EpConfig, type ExpertOutputOf, numberToBf16, type RankInput } from "@switchyard/core";
import { tokenOutputs } from "./tokenOutputs.js";

/** Magnitude of a cancelling pair within one rank: fp32 loses what is added to a lone 2^40 (its step is 2^17). */
const BIG = 2 ** 40;

/** Every pair of positions (i, j), i < j, among n. */
function pairsOf(n: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) out.push([i, j]);
  return out;
}

/**
 * The products w * o of one rank's n >= 3 entries of a token at element h, in slot order: a pair of
 * positions (i, j), picked by h and the token, holds +2^40 and -2^40 (either sign first); the other
 * entries hold distinct powers of two 2^0, 2^1, ... with signs. In slot order the pair cancels
 * exactly at j, so the fp32 partial is the sum of the entries after j; an order that adds any entry
 * to a lone 2^40 loses it, and distinct powers of two never sum alike over different subsets, so
 * an order that leaves another set of entries after the cancellation changes the partial. Along a
 * row the pair moves through every pair of positions, either sign first (given n(n-1) elements;
 * the token shifts where it starts), so every other order changes some element of a long enough
 * row. Every partial is an integer of magnitude below 64: exact in bf16.
 */
export function stackedProducts(n: number, h: number, token: number): number[] {
  const pairs = pairsOf(n);
  const pick = h + 3 * token;
  const [i, j] = pairs[pick % pairs.length];
  const sign = Math.floor(pick / pairs.length) % 2 === 0 ? 1 : -1;
  const out: number[] = [];
  let small = 0;
  for (let m = 0; m < n; m++) {
    if (m === i) out.push(sign * BIG);
    else if (m === j) out.push(-sign * BIG);
    else {
      out.push(((h + m + token) % 3 === 0 ? -1 : 1) * 2 ** (small % 6));
      small++;
    }
  }
  return out;
}

/** A small non-zero product for the entries of a rank with one or two entries (the order of two is invisible). */
export function plainProduct(h: number, token: number, slot: number): number {
  return (((h * 5 + token * 3 + slot * 7) % 15) - 7 || 8) / 4;
}

/**
 * Expert outputs that make the order of the entries within one rank's partial visible. Weights must
 * be non-zero powers of two (`powerOfTwoWeights`), so that o = product / w is exact. For a token
 * with three or more slots on one rank (stacked routing), each element's products on that rank are
 * `stackedProducts`: in slot order the partial is exact; in another order (reversed, a tree, by
 * row) elements differ. Keyed by provenance, as `ExpertOutputOf`.
 */
export function slotOrderOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const H = config.hidden;
  return tokenOutputs(config, inputs, (ranks, w, token) => {
    const made = Array.from({ length: config.topK }, () => new Uint16Array(H));
    for (const [, slots] of ranks) {
      for (let h = 0; h < H; h++) {
        const products =
          slots.length >= 3
            ? stackedProducts(slots.length, h, token)
            : slots.map((k) => plainProduct(h, token, k));
        slots.forEach((k, m) => {
          made[k][h] = numberToBf16(products[m] / w[k]);
        });
      }
    }
    return made;
  });
}
