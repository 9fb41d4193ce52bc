/**
 * IEEE 754 fp32 multiplication and division (round to nearest, ties to even; gradual underflow;
 * overflow to infinity) computed exactly with BigInt rationals, as the oracle for f32_exact.wgsl.
 * It shares nothing with the WGSL (no long division, no sticky bit) and no double rounding: the
 * exact quotient or product p / q * 2^e is rounded once.
 */

const F32_INF = 0x7f800000;
const F32_QNAN = 0x7fc00000;

export function isNanBits(b: number): boolean {
  return (b & 0x7fffffff) > F32_INF;
}

function bitLength(x: bigint): number {
  return x.toString(2).length;
}

/** A finite nonzero fp32 magnitude as sig * 2^ex (sig a BigInt, not normalised). */
function parts(b: number): { sig: bigint; ex: number } {
  const field = (b >>> 23) & 0xff;
  const man = b & 0x7fffff;
  return field === 0 ? { sig: BigInt(man), ex: -149 } : { sig: BigInt(man | 0x800000), ex: field - 150 };
}

/** fp32 bits of (p / q) * 2^e (p, q > 0) rounded once to nearest, ties to even, with sign bit `sign`. */
export function roundToF32(sign: number, p: bigint, q: bigint, e: number): number {
  // E = floor(log2(p / q * 2^e)): p / q lies in (2^(lp - lq - 1), 2^(lp - lq + 1)).
  let E = bitLength(p) - bitLength(q) + e;
  const k = e - E; // p / q * 2^e >= 2^E  <=>  p * 2^k >= q
  if ((k >= 0 ? p << BigInt(k) : p) < (k >= 0 ? q : q << BigInt(-k))) E -= 1;
  if (E > 127) return (sign | F32_INF) >>> 0;
  const qe = Math.max(E - 23, -149);
  let num = p;
  let den = q;
  if (e - qe >= 0) num <<= BigInt(e - qe);
  else den <<= BigInt(qe - e);
  let m = num / den;
  const twice = (num % den) * 2n;
  if (twice > den || (twice === den && (m & 1n) === 1n)) m += 1n;
  // m <= 2^24 units of 2^qe; a carry to 2^24 moves to the next binade (or to infinity) by itself.
  return (sign | ((qe + 149) * 2 ** 23 + Number(m))) >>> 0;
}

/** fp32 bits of a * b (IEEE, RNE). NaN results: a NaN operand quietened (the first), else 0x7fc00000. */
export function mulF32(a: number, b: number): number {
  if (isNanBits(a)) return (a | 0x400000) >>> 0;
  if (isNanBits(b)) return (b | 0x400000) >>> 0;
  const sign = (a ^ b) & 0x80000000;
  const ma = a & 0x7fffffff;
  const mb = b & 0x7fffffff;
  if (ma === F32_INF || mb === F32_INF) return ma === 0 || mb === 0 ? F32_QNAN : (sign | F32_INF) >>> 0;
  if (ma === 0 || mb === 0) return sign >>> 0;
  const pa = parts(a);
  const pb = parts(b);
  return roundToF32(sign, pa.sig * pb.sig, 1n, pa.ex + pb.ex);
}

/** fp32 bits of n / d (IEEE, RNE). NaN results: a NaN operand quietened (the first), else 0x7fc00000. */
export function divF32(n: number, d: number): number {
  if (isNanBits(n)) return (n | 0x400000) >>> 0;
  if (isNanBits(d)) return (d | 0x400000) >>> 0;
  const sign = (n ^ d) & 0x80000000;
  const mn = n & 0x7fffffff;
  const md = d & 0x7fffffff;
  if (mn === F32_INF) return md === F32_INF ? F32_QNAN : (sign | F32_INF) >>> 0;
  if (md === F32_INF) return sign >>> 0;
  if (md === 0) return mn === 0 ? F32_QNAN : (sign | F32_INF) >>> 0;
  if (mn === 0) return sign >>> 0;
  const pn = parts(n);
  const pd = parts(d);
  return roundToF32(sign, pn.sig, pd.sig, pn.ex - pd.ex);
}
