import { MIN_SCALE_EXP } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";

/** bf16 bits of +448 * 2^s (448 = 1.75 * 2^8: exponent s + 8, mantissa 0b1100000). */
function bf16Of448Times(s: number): number {
  return ((s + 8 + 127) << 7) | 0x60;
}

/**
 * The largest magnitude (bf16 bits, positive) of one block, on a boundary of core's block-scale
 * rule (blockScale.ts: the scale is 2^s for the smallest s >= -126 with amax <= 448 * 2^s), four
 * kinds with equal odds:
 * - exactly a power of two, 2^e, from bf16 subnormals (2^-133) to 2^127;
 * - exactly 448 * 2^s (the largest amax of scale 2^s; one bf16 step more needs 2^(s+1));
 * - one bf16 step above or below 448 * 2^s;
 * - at the scale floor: 448 * 2^-126 itself, a step above it (scale 2^-125), or a block of tiny
 *   values (bf16 subnormals and the smallest normals, all under the floor).
 */
function edgeTop(rng: Rng): number {
  switch (rng.int(0, 3)) {
    case 0: {
      const e = rng.pick([
        () => rng.int(-133, -127),
        () => rng.int(-126, -110),
        () => rng.int(-12, 12),
        () => rng.int(100, 127),
      ])();
      return e < -126 ? 1 << (e + 133) : (e + 127) << 7;
    }
    case 1:
      return bf16Of448Times(
        rng.pick([() => rng.int(MIN_SCALE_EXP, -110), () => rng.int(-12, 12), () => rng.int(100, 119)])(),
      );
    case 2:
      return bf16Of448Times(rng.int(MIN_SCALE_EXP, 119)) + rng.pick([1, -1]);
    default:
      return rng.pick([bf16Of448Times(MIN_SCALE_EXP), bf16Of448Times(MIN_SCALE_EXP) + 1, rng.int(1, 0x01ff)]);
  }
}

/**
 * Fills out[b, end) with a block whose largest magnitude is `edgeTop`: that value (with a random
 * sign) at a random place, a few more copies of it, and the rest any finite value of no greater
 * magnitude (bf16 bits compare like magnitudes).
 */
export function fillEdgeBlock(out: Uint16Array, b: number, end: number, rng: Rng): void {
  const top = edgeTop(rng);
  for (let i = b; i < end; i++) {
    const bits = rng.chance(0.05) ? top : rng.int(0, top);
    out[i] = bits | (rng.int(0, 1) << 15);
  }
  out[rng.int(b, end - 1)] = top | (rng.int(0, 1) << 15);
}

/** fp8-e4m3 codes at the format's edges: zeros, the smallest subnormal and normal, 448, their neighbours. */
const FP8_EDGES = [0x00, 0x80, 0x01, 0x81, 0x07, 0x87, 0x08, 0x88, 0x77, 0x78, 0x7e, 0xfe, 0x7d, 0xfd];

/** n fp8 codes, half of them from FP8_EDGES (never a NaN code). */
export function fillFp8Edges(n: number, rng: Rng): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let v = rng.chance(0.5) ? rng.pick(FP8_EDGES) : rng.int(0, 255);
    while ((v & 0x7f) === 0x7f) v = rng.int(0, 255);
    out[i] = v;
  }
  return out;
}

/** n fp32 block scales at fp32's and the block rule's edges: 2^-126, 2^-149, 2^127, the largest float, 448 * 2^s. */
export function fillScaleEdges(n: number, rng: Rng): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = rng.pick([
      () => 2 ** MIN_SCALE_EXP,
      () => 2 ** -149,
      () => 2 ** 127,
      () => 3.4028234663852886e38,
      () => 448 * 2 ** rng.int(-126, 119),
      () => 2 ** rng.int(-126, 127),
    ])();
  }
  return out;
}
