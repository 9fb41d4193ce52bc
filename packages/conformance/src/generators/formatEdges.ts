import { numberToBf16 } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";
import { fillEdgeBlock } from "./edges.js";

/** bf16 bits around the amax format's floor fl32(1e-4): 0x38d1 is just above it, 0x38d0 just below. */
const NEAR_FLOOR = [0x38d0, 0x38d1, 0x38d2, 0x38cf];
/** bf16 specials: infinities and NaNs of both signs (amax skips them; each format saturates or keeps NaN). */
const NON_FINITE = [0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffff];

/**
 * Fills out[b, end) with one block on a boundary of the scale formats (core codec/amaxScale.ts and
 * blockScale.ts), kinds with equal odds:
 * - all signed zeros;
 * - one huge value (up to the largest finite bf16) among small ones;
 * - only bf16 subnormals and tiny normals (amax under the amax floor);
 * - largest magnitude at the amax floor or one bf16 step either side of it;
 * - values at +-448 and their bf16 neighbours;
 * - NaN and infinities among finite values;
 * - a pow2 boundary block (edges.ts: amax exactly 2^e or 448 * 2^s, the 2^-126 floor).
 */
export function fillFormatEdgeBlock(out: Uint16Array, b: number, end: number, rng: Rng): void {
  const sign = () => rng.int(0, 1) << 15;
  const kind = rng.int(0, 6);
  for (let i = b; i < end; i++) {
    switch (kind) {
      case 0:
        out[i] = sign();
        break;
      case 1:
      case 3:
      case 5:
        out[i] = rng.int(0, 0x3f80) | sign(); // magnitudes up to 1
        break;
      case 2:
        out[i] = rng.int(0, 0x0200) | sign(); // subnormals and the smallest normals
        break;
      case 4:
        out[i] = rng.int(0, numberToBf16(448)) | sign();
        break;
      default:
        fillEdgeBlock(out, b, end, rng);
        return;
    }
  }
  const at = rng.int(b, end - 1);
  if (kind === 1) out[at] = rng.pick([0x7f7f, 0x7f00, (rng.int(130, 254) << 7) | rng.int(0, 127)]) | sign();
  if (kind === 3) {
    for (let i = b; i < end; i++) if (rng.chance(0.9)) out[i] &= 0x8000 | 0x38cf; // below the floor
    out[at] = rng.pick(NEAR_FLOOR) | sign();
  }
  if (kind === 4) out[at] = rng.pick([0x43e0, 0x43df, 0x43e1]) | sign(); // 448, 446, 450
  if (kind === 5) for (let i = 0; i < rng.int(1, 4); i++) out[rng.int(b, end - 1)] = rng.pick(NON_FINITE);
}
