/**
 * fp8 e4m3 ("e4m3fn", OCP FP8): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits.
 * No infinities; 0x7f and 0xff are NaN; the largest finite magnitude is 448 (0x7e).
 * Subnormals are m * 2^-9 for m in 1..7; the smallest normal is 2^-6.
 *
 * Encoding rule (exact): take the exact real value v, round it to the nearest e4m3 value with
 * ties to even mantissa, and saturate: any |v| > 448 (also +-Infinity) becomes +-448.
 * NaN becomes 0x7f | sign. The sign of zero is kept (-0 encodes as 0x80). A JS number carries no
 * NaN sign, so `encodeFp8(NaN)` is 0x7f; `quantizeRows` applies the sign of a NaN's bf16 bits.
 */
export const FP8_MAX = 448;

export function decodeFp8(bits: number): number {
  const sign = bits & 0x80 ? -1 : 1;
  const exp = (bits >>> 3) & 0xf;
  const man = bits & 7;
  if (exp === 15 && man === 7) return Number.NaN;
  if (exp === 0) return sign * man * 2 ** -9;
  return sign * (1 + man / 8) * 2 ** (exp - 7);
}

function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Encodes an exact real value (a double) to e4m3 bits by the rule above. */
export function encodeFp8(v: number): number {
  const sign = v < 0 || Object.is(v, -0) ? 0x80 : 0;
  if (Number.isNaN(v)) return 0x7f;
  const a = Math.abs(v);
  if (a > FP8_MAX) return sign | 0x7e;
  if (a < 2 ** -6) {
    const m = roundHalfEven(a * 2 ** 9); // 0..8; 8 is the smallest normal (0x08)
    return sign | m;
  }
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  let m = roundHalfEven((a / 2 ** e - 1) * 8);
  if (m === 8) {
    m = 0;
    e++;
  }
  return sign | ((e + 7) << 3) | m;
}
