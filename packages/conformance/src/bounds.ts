/**
 * The error bounds the suite holds backends to, with their derivations. Notation: u = 2^-24
 * (fp32 unit roundoff), b = 2^-8 (bf16 unit roundoff: 8 significant bits, round to nearest even),
 * n = the slots of a token that are used (topkIdx >= 0), n <= K <= 64.
 *
 * ## Combine
 *
 * The reference computes, per output element, acc = fp32 sum over used slots k (in slot order) of
 * fp32(w_k * o_k), then y = bf16(acc). We compare y with y64 = sum_k w_k * o_k computed in float64
 * (each product of an fp32 and a bf16 is exact in float64; the float64 sum's own error,
 * n * 2^-53 * A, is far inside the slack below), where A = sum_k |w_k * o_k|.
 *
 * 1. Any fp32 evaluation of the n products and n-1 additions, in any order (slot order, a tree,
 *    fused multiply-adds, or wider accumulators, which only remove roundings), satisfies
 *    |acc - y64| <= gamma_n * A with gamma_n = n*u / (1 - n*u) (Higham, "Accuracy and Stability of
 *    Numerical Algorithms", 2nd ed., sections 3.1 and 4.2). While a product or sum is an fp32
 *    subnormal the error is absolute instead, at most 2^-150 per operation, n * 2^-150 <= 2^-144 in all.
 * 2. The single rounding to bf16 adds |bf16(acc) - acc| <= b * |acc| in the normal range, or
 *    half the bf16 subnormal spacing, 2^-134, below it. |acc| <= |y64| + gamma_n * A.
 * 3. Together: |y - y64| <= b*|y64| + (1 + b) * gamma_n * A + 2^-134 + 2^-144, and since
 *    (1 + b) * gamma_n <= (n + 1) * u for n <= 64, the suite checks
 *
 *        |y - y64| <= 2^-8 * |y64| + (n + 1) * 2^-24 * A + 2^-133
 *
 *    (2^-133, the smallest bf16 subnormal, covers the absolute terms). This is the bound for
 *    rounding once to bf16 after any fp32-or-better accumulation; it does not admit rounding
 *    the products or partial sums to bf16 (each such rounding costs up to 2^-9 * |term|, which
 *    can exceed it), nor flushing subnormals to zero on inputs that are subnormal.
 *
 * Everything is finite by construction: generated values stay below 2^61 and |w| <= 4, so no sum
 * approaches the fp32 range.
 *
 * ## Round trip with identity experts
 *
 * Every slot of a token returns the token's own row as bf16, so the exact combine result is
 * W * o with W = sum_k w_k and o = the row as the expert saw it. We check y against W * x, where
 * x is the token's row as bf16 (for fp8 input: the input dequantised and rounded to bf16, which
 * is exactly what the identity experts return, so delta = 0 below).
 *
 * With quantise-on-dispatch (bf16 input, fp8 dispatch) o = bf16(e4m3(x / 2^s) * 2^s), 2^s the
 * block's scale. e4m3 has 4 significant bits: rounding v = x / 2^s (|v| <= 448, so no saturation)
 * errs by at most 2^-4 * |v| in the normal range (|v| >= 2^-6) and by half the subnormal
 * spacing, 2^-10, below it. Scaling by 2^s is exact, and rounding the result to bf16 is exact
 * except below 2^-126 where it errs by at most 2^-134. So per element
 *
 *        delta = |o - x| <= 2^-4 * |x| + 2^-10 * 2^s + 2^-134
 *
 * (the 2^-10 * 2^s term is the block-scale subnormal floor: small values of a block whose
 * largest value is large lose everything below 2^-9 * 2^s). Then
 * |y - W*x| <= |y - W*o| + |W| * delta, and |y - W*o| is the combine bound with y64 = W*o,
 * |W*o| <= |W*x| + |W|*delta and A <= (sum_k |w_k|) * (|x| + delta).
 */

/** fp32 unit roundoff. */
export const FP32_U = 2 ** -24;
/** bf16 unit roundoff (relative error of one round-to-nearest to bf16 in the normal range). */
export const BF16_U = 2 ** -8;
/** The smallest positive bf16 (a subnormal): the absolute floor of every bound. */
export const BF16_MIN_SUBNORMAL = 2 ** -133;
/** e4m3 unit roundoff (4 significant bits). */
export const FP8_U = 2 ** -4;
/** Half the e4m3 subnormal spacing (2^-9): the absolute error of quantising a tiny value, before scaling. */
export const FP8_SUBNORMAL_HALF_STEP = 2 ** -10;

/**
 * Largest allowed |y - y64| for one combined element.
 * @param y64 the exact (float64) weighted sum
 * @param absSum A = sum over used slots of |w_k * o_k|
 * @param used n, the number of used slots
 */
export function combineBound(y64: number, absSum: number, used: number): number {
  return BF16_U * Math.abs(y64) + (used + 1) * FP32_U * absSum + BF16_MIN_SUBNORMAL;
}

/**
 * Largest |o - x| for one element quantised to e4m3 with block scale `scale` (= 2^s) and
 * dequantised to bf16. 0 when `scale` is null (no quantisation on the way).
 */
export function fp8Delta(x: number, scale: number | null): number {
  if (scale === null) return 0;
  return FP8_U * Math.abs(x) + FP8_SUBNORMAL_HALF_STEP * scale + BF16_MIN_SUBNORMAL / 2;
}

/**
 * Largest allowed |y - W*x| for one element of a round trip through identity experts.
 * @param x the token's element (bf16 value)
 * @param W sum of the used slots' weights
 * @param absW sum of the used slots' |weights|
 * @param used number of used slots
 * @param delta `fp8Delta` of the element (0 without quantisation)
 */
export function roundTripBound(x: number, W: number, absW: number, used: number, delta: number): number {
  const wo = Math.abs(W * x) + Math.abs(W) * delta;
  const a = absW * (Math.abs(x) + delta);
  return combineBound(wo, a, used) + Math.abs(W) * delta;
}
