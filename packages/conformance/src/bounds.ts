/**
 * The error bounds the suite holds backends to, with their derivations. Notation: u = 2^-24
 * (fp32 unit roundoff), b = 2^-8 (bf16 unit roundoff: 8 significant bits, round to nearest even),
 * n = the slots of a token that are used (topkIdx >= 0), n <= K <= 64.
 *
 * ## Combine
 *
 * The reference (protocol version 2, docs/protocol.md) computes, per output element, on each
 * expert rank r hosting some of the token's slots: acc_r = fp32 sum over r's slots (slot order)
 * of fp32(w_k * o_k); the partial P_r = bf16(acc_r); at home acc = fp32 sum of the P_r in
 * ascending rank order; y = bf16(acc). We compare y with y64 = sum_k w_k * o_k computed in
 * float64 (each product of an fp32 and a bf16 is exact in float64; the float64 sum's own error is
 * far inside the slack below). A = sum_k |w_k * o_k|; p_r = the float64 sum of rank r's terms;
 * P = sum_r |p_r|; n used slots, m ranks they name.
 *
 * 1. Any fp32 evaluation of rank r's n_r products and sums (slot order, a tree, fused
 *    multiply-adds, wider accumulators) gives |acc_r - p_r| <= gamma_{n_r} * A_r with
 *    gamma_n = n*u / (1 - n*u) (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
 *    sections 3.1 and 4.2); summed over ranks, at most gamma_n * A.
 * 2. Rounding each partial to bf16 adds at most b * |acc_r| + 2^-134 (half the bf16 subnormal
 *    spacing): in all b * (P + gamma_n * A) + m * 2^-134.
 * 3. The home's fp32 sum of m partials errs by at most gamma_m * sum |P_r|
 *    <= gamma_m * (1 + b) * (1 + gamma_n) * A.
 * 4. The final rounding adds b * |acc| + 2^-134, |acc| <= |y64| + (the errors above).
 * 5. Together, for n, m <= 64 the u-terms sum to at most (n + m + 2) * u * A, so the suite checks
 *
 *        |y - y64| <= 2^-8 * |y64| + 2^-8 * (1 + 2^-8) * P + (n + m + 2) * 2^-24 * A + (m + 1) * 2^-133
 *
 *    It admits exactly one bf16 rounding per rank's partial and one at the end; it does not admit
 *    rounding the products or the running sums within a rank to bf16 (each such rounding costs up
 *    to 2^-9 of a running sum, which with cancellation far exceeds 2^-8 * |p_r|), nor flushing
 *    subnormal inputs to zero. With every slot on one rank (m = 1) it still admits the partial's
 *    rounding once: the home's sum of one bf16 value is exact.
 *
 * ## Combine with the weights at home (`combineWeights: "home"`)
 *
 * The home computes acc = fp32 sum over the n used slots (slot order) of fp32(w_k * o_k) and
 * y = bf16(acc): no partial is rounded on the way. By 1, |acc - y64| <= gamma_n * A; the final
 * rounding adds b * |acc| + 2^-134 <= b * (|y64| + gamma_n * A) + 2^-134. For n <= 64,
 * (1 + b) * gamma_n <= (n + 1) * u, so the suite checks
 *
 *        |y - y64| <= 2^-8 * |y64| + (n + 2) * 2^-24 * A + 2^-133
 *
 * (`homeCombineBound`: `combineBound` with no partials, P = 0 and m = 0). It admits any fp32
 * order, a tree or fused multiply-adds, but not a bf16 rounding per rank: a backend that weights
 * and sums on the expert ranks, as with `expert`, errs by up to 2^-9 * |p_r| per partial, which
 * with cancelling partials far exceeds the bound.
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
 * |W*o| <= |W*x| + |W|*delta and A, P <= (sum_k |w_k|) * (|x| + delta).
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
 * Largest allowed |y - y64| for one combined element (see "Combine" above).
 * @param y64 the exact (float64) weighted sum
 * @param absSum A = sum over used slots of |w_k * o_k|
 * @param used n, the number of used slots
 * @param partialAbsSum P = sum over the ranks the slots name of |exact partial sum of that rank's terms|
 * @param ranks m, the number of ranks the used slots name
 */
export function combineBound(
  y64: number,
  absSum: number,
  used: number,
  partialAbsSum: number,
  ranks: number,
): number {
  return (
    BF16_U * Math.abs(y64) +
    BF16_U * (1 + BF16_U) * partialAbsSum +
    (used + ranks + 2) * FP32_U * absSum +
    (ranks + 1) * BF16_MIN_SUBNORMAL
  );
}

/**
 * Largest allowed |y - y64| for one element combined with `combineWeights: "home"` (see "Combine
 * with the weights at home" above): one fp32 sum of the used slots' products, rounded once.
 * @param y64 the exact (float64) weighted sum
 * @param absSum A = sum over used slots of |w_k * o_k|
 * @param used n, the number of used slots
 */
export function homeCombineBound(y64: number, absSum: number, used: number): number {
  return combineBound(y64, absSum, used, 0, 0);
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
 * @param ranks number of ranks the used slots name
 * @param delta `fp8Delta` of the element (0 without quantisation)
 */
export function roundTripBound(
  x: number,
  W: number,
  absW: number,
  used: number,
  ranks: number,
  delta: number,
): number {
  const wo = Math.abs(W * x) + Math.abs(W) * delta;
  const a = absW * (Math.abs(x) + delta);
  return combineBound(wo, a, used, a, ranks) + Math.abs(W) * delta;
}
