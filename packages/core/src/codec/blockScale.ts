import { FP8_BLOCK } from "../dtype.js";
import { quantizeBlockAmax } from "./amaxScale.js";
import { bf16ToNumber, numberToBf16 } from "./bf16.js";
import { decodeFp8, encodeFp8, FP8_MAX } from "./fp8.js";
import type { ScaleFormat } from "./scaleFormat.js";

/**
 * Quantisation of bf16 rows to fp8 e4m3 with one fp32 scale per block of 128 elements.
 *
 * The block-scale rule, exactly:
 * 1. amax = the largest |x| over the block's finite values (NaN and +-Infinity are skipped; 0 if none).
 * 2. s = the smallest integer >= -126 with amax <= 448 * 2^s. The scale is 2^s, a power of two,
 *    so scale and unscale are exact in every implementation (no division rounding to agree on).
 * 3. q = e4m3(x / 2^s) by the rounding rule of fp8.ts (RNE, saturating to +-448, NaN -> 0x7f | sign,
 *    the sign taken from the NaN's bf16 bits: 0x7fc0 -> 0x7f, 0xffc0 -> 0xff).
 * 4. The dequantised value is e4m3value(q) * 2^s (exact in fp32 for every finite result).
 * This is the `pow2` format, and the `ue8m0` format's too (its scale 2^s is the byte s + 127,
 * ue8m0.ts). The `amax` format's rule is in amaxScale.ts.
 */
export const MIN_SCALE_EXP = -126;

/** The exponent s of a block's scale 2^s for a block whose largest finite magnitude is `amax`. */
export function scaleExponent(amax: number): number {
  if (!(amax > 0)) return MIN_SCALE_EXP;
  let s = Math.max(MIN_SCALE_EXP, Math.ceil(Math.log2(amax / FP8_MAX)));
  while (amax > FP8_MAX * 2 ** s) s++;
  while (s > MIN_SCALE_EXP && amax <= FP8_MAX * 2 ** (s - 1)) s--;
  return s + 0; // never -0 (Math.ceil of a small negative is -0)
}

/**
 * Quantises bf16 rows [rows, hidden] to fp8 bits [rows, hidden] and fp32 scales [rows, hidden/128]
 * by the block-scale rule of `format` (default `pow2`; `ue8m0` scales are 2^s in fp32, packed by
 * `packUe8m0Scales`). `hidden` must be a multiple of 128.
 */
export function quantizeRows(
  x: Uint16Array,
  hidden: number,
  format: ScaleFormat = "pow2",
): { q: Uint8Array; scales: Float32Array } {
  if (hidden % FP8_BLOCK !== 0)
    throw new RangeError(`quantizeRows: hidden ${hidden} is not a multiple of ${FP8_BLOCK}`);
  const blocks = x.length / FP8_BLOCK;
  const q = new Uint8Array(x.length);
  const scales = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    const start = b * FP8_BLOCK;
    const end = start + FP8_BLOCK;
    scales[b] = format === "amax" ? quantizeBlockAmax(x, start, end, q) : quantizeBlockPow2(x, start, end, q);
  }
  return { q, scales };
}

/** One block of bf16 bits x[start, end) quantised in place into q[start, end) by the rule above; returns 2^s. */
export function quantizeBlockPow2(x: Uint16Array, start: number, end: number, q: Uint8Array): number {
  let amax = 0;
  for (let i = start; i < end; i++) {
    const a = Math.abs(bf16ToNumber(x[i]));
    if (Number.isFinite(a) && a > amax) amax = a;
  }
  const s = scaleExponent(amax);
  for (let i = start; i < end; i++) {
    // A JS NaN has no sign, so a NaN's sign is taken from its bf16 bits.
    const nanSign = (x[i] & 0x7fff) > 0x7f80 ? (x[i] >>> 8) & 0x80 : 0;
    q[i] = encodeFp8(bf16ToNumber(x[i]) / 2 ** s) | nanSign;
  }
  return 2 ** s;
}

/**
 * Dequantises fp8 rows with their block scales to fp32 values (e4m3value * scale, rounded to fp32),
 * for every format (`ue8m0` scales as fp32 2^s: `unpackUe8m0Scales` turns packed words back into them).
 */
export function dequantizeRows(q: Uint8Array, scales: Float32Array, hidden: number): Float32Array {
  const out = new Float32Array(q.length);
  const perRow = hidden / FP8_BLOCK;
  for (let i = 0; i < q.length; i++) {
    const row = Math.floor(i / hidden);
    const block = Math.floor((i % hidden) / FP8_BLOCK);
    out[i] = decodeFp8(q[i]) * scales[row * perRow + block];
  }
  return out;
}

/** Dequantises fp8 rows to bf16 bits (each value rounded once, RNE). */
export function dequantizeRowsToBf16(q: Uint8Array, scales: Float32Array, hidden: number): Uint16Array {
  const f = dequantizeRows(q, scales, hidden);
  const out = new Uint16Array(f.length);
  for (let i = 0; i < f.length; i++) out[i] = numberToBf16(f[i]);
  return out;
}
