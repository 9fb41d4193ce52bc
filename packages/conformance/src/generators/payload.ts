import { FP8_BLOCK } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";
import { fillEdgeBlock, fillFp8Edges, fillScaleEdges } from "./edges.js";
import { fillFormatEdgeBlock } from "./formatEdges.js";

/**
 * What token rows hold:
 * - normal: finite values of magnitude about 2^-6..2^3;
 * - wide: each 128-block centred on its own exponent from bf16 subnormals up to 2^60 (a quarter
 *   of the blocks near the subnormal range, a quarter near 2^50), some blocks all zero
 *   (exercises every fp8 block scale, including the 2^-126 floor);
 * - special: wide plus NaNs (several payloads), infinities, signed zeros, subnormals and the
 *   largest finite value; only for properties that compare bits (dispatch), not sums;
 * - edges: finite blocks whose largest magnitude sits on a boundary of the fp8 block-scale rule
 *   (exactly a power of two, exactly 448 * 2^s or one step off it, at the 2^-126 scale floor; see
 *   edges.ts), fp8 codes and scales at the formats' edges for fp8 input;
 * - formats: blocks on the boundaries of every scale format (all zero, one huge value, under the
 *   amax floor and at it, +-448, NaN and infinities, pow2's edges; formatEdges.ts); fp8 input as edges.
 */
export type PayloadStyle = "normal" | "wide" | "special" | "edges" | "formats";

const BF16_SPECIALS = [
  0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffff, 0x0001, 0x807f, 0x7f7f, 0xff7f,
];

function bf16Bits(sign: number, exp: number, rng: Rng): number {
  const mantissa = rng.int(0, 127);
  if (exp < -126) return (sign << 15) | mantissa; // subnormal (or zero)
  return (sign << 15) | ((exp + 127) << 7) | mantissa;
}

/** n bf16 values (bits), in blocks of 128 elements. */
export function fillBf16(n: number, style: PayloadStyle, rng: Rng): Uint16Array {
  const out = new Uint16Array(n);
  for (let b = 0; b < n; b += FP8_BLOCK) {
    const end = Math.min(n, b + FP8_BLOCK);
    if (style === "normal") {
      for (let i = b; i < end; i++)
        out[i] = rng.chance(0.03) ? 0 : bf16Bits(rng.int(0, 1), rng.int(-6, 2), rng);
      continue;
    }
    if (style === "edges") {
      fillEdgeBlock(out, b, end, rng);
      continue;
    }
    if (style === "formats") {
      fillFormatEdgeBlock(out, b, end, rng);
      continue;
    }
    if (rng.chance(0.05)) continue; // an all-zero block
    const centre = rng.pick([
      () => rng.int(-133, -118), // bf16 subnormals and the smallest normals
      () => rng.int(-10, 10),
      () => rng.int(-133, 60),
      () => rng.int(40, 60),
    ])();
    for (let i = b; i < end; i++) {
      if (style === "special" && rng.chance(0.04)) out[i] = rng.pick(BF16_SPECIALS);
      else out[i] = bf16Bits(rng.int(0, 1), centre - rng.int(0, 6), rng);
    }
  }
  return out;
}

/** n fp8-e4m3 values (bits); only `special` includes the NaN codes 0x7f and 0xff. */
export function fillFp8(n: number, style: PayloadStyle, rng: Rng): Uint8Array {
  if (style === "edges" || style === "formats") return fillFp8Edges(n, rng);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let v = rng.int(0, 255);
    if (style !== "special") while ((v & 0x7f) === 0x7f) v = rng.int(0, 255);
    out[i] = v;
  }
  return out;
}

/**
 * n fp32 block scales for fp8 input of the ue8m0 format: powers of two 2^k, k in [-8, 8] for
 * `normal`, in [-40, 40] for `wide` (sums stay finite), and for the bit-compared styles also a
 * tenth at either end of [-127, 127].
 */
export function fillUe8m0Scales(n: number, style: PayloadStyle, rng: Rng): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const extreme = style !== "normal" && style !== "wide" && rng.chance(0.1);
    if (style === "normal") out[i] = 2 ** rng.int(-8, 8);
    else out[i] = 2 ** (extreme ? rng.pick([-127, -126, 126, 127]) : rng.int(-40, 40));
  }
  return out;
}

/** n fp32 block scales for fp8 input: powers of two and arbitrary positive values; `special` adds 0, negatives, NaN, Inf. */
export function fillScales(n: number, style: PayloadStyle, rng: Rng): Float32Array {
  if (style === "edges" || style === "formats") return fillScaleEdges(n, rng);
  const out = new Float32Array(n);
  const spread = style === "normal" ? 8 : 40;
  for (let i = 0; i < n; i++) {
    if (style === "special" && rng.chance(0.1)) {
      out[i] = rng.pick([0, -0, -1, 1e-45, Number.NaN, Number.POSITIVE_INFINITY]);
    } else if (rng.chance(0.7)) {
      out[i] = 2 ** rng.int(-spread, spread);
    } else {
      out[i] = Math.fround(rng.next() * 2 ** rng.int(-spread, spread));
    }
  }
  return out;
}
