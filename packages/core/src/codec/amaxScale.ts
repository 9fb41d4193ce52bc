import { bf16ToNumber } from "./bf16.js";
import { encodeFp8, FP8_MAX } from "./fp8.js";

/**
 * The `amax` block-scale format (DeepEP's default low-latency fp8 cast), exactly. fl32(v) is v
 * rounded to fp32 (round to nearest even); every operand below is an fp32 value.
 *
 * 1. amax = the largest |x| over the block's finite values (NaN and +-Infinity skipped; 0 if none),
 *    then a = max(amax, AMAX_FLOOR): AMAX_FLOOR = fl32(1e-4) keeps an all-zero block's scale finite.
 * 2. scale = fl32(a * FP8_MAX_INV), FP8_MAX_INV = fl32(1 / 448) (0x3b124925). This is the stored fp32 scale.
 * 3. r = fl32(448 / a), the block's reciprocal, one correctly rounded fp32 division.
 * 4. q = e4m3(fl32(x * r)) by fp8.ts's rule (RNE, saturating to +-448; +-Infinity gives fl32(+-Inf) and
 *    saturates to +-448; NaN -> 0x7f | the sign of its bf16 bits; -0 -> 0x80).
 * 5. The dequantised value is fl32(e4m3value(q) * scale).
 *
 * a >= 1e-4 keeps r and scale normal fp32 values; fl32(x * r) can only be an fp32 subnormal where
 * |x * r| < 2^-126, whose e4m3 code is a signed zero whether or not a device flushes it.
 */
export const AMAX_FLOOR = Math.fround(1e-4);
export const FP8_MAX_INV = Math.fround(1 / FP8_MAX);

/** One block of bf16 bits x[start, end) quantised in place into q[start, end); returns the fp32 scale. */
export function quantizeBlockAmax(x: Uint16Array, start: number, end: number, q: Uint8Array): number {
  let amax = 0;
  for (let i = start; i < end; i++) {
    const v = Math.abs(bf16ToNumber(x[i]));
    if (Number.isFinite(v) && v > amax) amax = v;
  }
  const a = Math.max(amax, AMAX_FLOOR);
  // Each product or quotient of two fp32 values is exact or correctly rounded in a double, and
  // one more rounding to fp32 then gives the correctly rounded fp32 result.
  const r = Math.fround(FP8_MAX / a);
  for (let i = start; i < end; i++) {
    const nanSign = (x[i] & 0x7fff) > 0x7f80 ? (x[i] >>> 8) & 0x80 : 0;
    q[i] = encodeFp8(Math.fround(bf16ToNumber(x[i]) * r)) | nanSign;
  }
  return Math.fround(a * FP8_MAX_INV);
}
