import {
  type EpConfig,
  type ExpertOutputOf,
  encodeBf16,
  numberToBf16,
  type RankInput,
} from "@switchyard/core";
import { plainProduct, stackedProducts } from "./slotOrder.js";
import { tokenOutputs } from "./tokenOutputs.js";

/**
 * Expert outputs that make the home's slot order visible across ranks (`combineWeights: "home"`):
 * the products w * o of a token's used slots, in slot order, are `stackedProducts` over all of
 * them when there are three or more (a +-2^40 pair moving through every pair of positions along
 * the row, distinct powers of two elsewhere), whichever ranks host them. In ascending slot order
 * the sum is exact; summed per rank first (partials, as with `expert`), in another order, or as a
 * tree, some element differs. Weights must be non-zero powers of two (`powerOfTwoWeights`).
 */
export function homeSlotOrderOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const H = config.hidden;
  return tokenOutputs(config, inputs, (ranks, w, token) => {
    const made = Array.from({ length: config.topK }, () => new Uint16Array(H));
    const used = ranks.flatMap(([, slots]) => slots).sort((a, b) => a - b);
    for (let h = 0; h < H; h++) {
      const products =
        used.length >= 3
          ? stackedProducts(used.length, h, token)
          : used.map((k) => plainProduct(h, token, k));
      used.forEach((k, m) => {
        made[k][h] = numberToBf16(products[m] / w[k]);
      });
    }
    return made;
  });
}

/**
 * Router weights on the boundaries of fp32: +-0, the smallest subnormal 2^-149, other subnormals
 * (2^-140, 2^-127), the smallest normal 2^-126, and small ordinary values of both signs.
 */
export const EDGE_WEIGHTS: readonly number[] = [
  0,
  -0,
  2 ** -149,
  -(2 ** -140),
  2 ** -127,
  -(2 ** -126),
  0.5,
  -1.25,
  3,
  -1,
];

/** The inputs with every weight replaced by one of `EDGE_WEIGHTS`, picked by position and the drawn weight's bits. */
export function edgeWeights(inputs: RankInput[]): RankInput[] {
  return inputs.map((input, rank) => ({
    ...input,
    topkWeights: Float32Array.from(input.topkWeights, (w, i) => {
      const pick = (i * 7 + rank * 3 + Math.floor(Math.abs(w) * 1024)) % EDGE_WEIGHTS.length;
      return EDGE_WEIGHTS[pick];
    }),
  }));
}

/** Output magnitudes for the edge weights: huge (2^100, which a zero weight must still cancel), tiny, ordinary. */
const EDGE_OUTPUTS = [1, -3, 2 ** 100, -(2 ** -100), 2 ** 20, 0.75, -(2 ** 60), 2 ** -20];

/**
 * Expert outputs for `edgeWeights`: each element one of `EDGE_OUTPUTS`, picked by (token, slot,
 * element), so that a subnormal weight times 2^20 is an fp32 subnormal product, times 2^100 a
 * normal one, a zero weight meets 2^100, and a token with a single used slot shows its product's
 * bits in y (a backend that flushes subnormal weights or products to zero differs there).
 */
export function edgeOutputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf {
  const H = config.hidden;
  return tokenOutputs(config, inputs, (_ranks, _w, token) =>
    Array.from({ length: config.topK }, (_, k) =>
      encodeBf16(
        Array.from({ length: H }, (_, h) => EDGE_OUTPUTS[(h + 3 * k + 5 * token) % EDGE_OUTPUTS.length]),
      ),
    ),
  );
}
