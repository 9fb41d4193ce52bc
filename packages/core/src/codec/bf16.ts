/**
 * bfloat16: the top 16 bits of an IEEE fp32. Values are handled as raw uint16 bits.
 * Rounding fp32 -> bf16 is round-to-nearest-even; NaN becomes a quiet NaN with its sign
 * (0x7fc0 | sign); infinities and signed zeros are kept.
 */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The value of bf16 bits (exact: every bf16 is an fp32 and a double). */
export function bf16ToNumber(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0];
}

/** The fp32 bit pattern of `x` after rounding it to fp32. */
export function f32Bits(x: number): number {
  f32[0] = x;
  return u32[0];
}

/**
 * Rounds `x` to bf16 bits. `x` is first rounded to fp32 (pass an fp32 value, e.g. from
 * `Math.fround`, to round only once), then to bf16 by round-to-nearest-even.
 */
export function numberToBf16(x: number): number {
  const b = f32Bits(x);
  if ((b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0) return ((b >>> 16) & 0x8000) | 0x7fc0;
  const lsb = (b >>> 16) & 1;
  return ((b + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** Decodes a bf16 array into fp32 values. */
export function decodeBf16(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  new Uint32Array(out.buffer).set(Uint32Array.from(bits, (b) => b << 16));
  return out;
}

/** Encodes numbers into bf16 bits (each rounded to fp32 first, then RNE to bf16). */
export function encodeBf16(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = numberToBf16(values[i]);
  return out;
}
