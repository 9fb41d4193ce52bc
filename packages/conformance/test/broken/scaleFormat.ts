import { AMAX_FLOOR, FP8_MAX, FP8_MAX_INV, scaleExponent } from "@switchyard/core";
import { requantizingBackend } from "./requantize.js";

/**
 * Two plausible slips in the scale formats, each only on blocks whose largest magnitude is under
 * 1e-4 (every other block is right):
 * - amax: no floor, so an all-zero block divides by zero (scale 0, NaN codes) and a tiny block
 *   gets a tiny scale;
 * - ue8m0: the exponent taken from max(amax, 1e-4), as DeepEP computes it, not core's pow2 rule.
 */
export const unflooredScales = requantizingBackend(
  "scale-format-floor",
  (config) => config.scaleFormat === "amax" || config.scaleFormat === "ue8m0",
  (amax, config) => {
    if (amax >= AMAX_FLOOR) return null;
    if (config.scaleFormat === "ue8m0") {
      const r32 = 2 ** -scaleExponent(AMAX_FLOOR);
      return { scale: 1 / r32, factor: r32 };
    }
    return { scale: Math.fround(amax * FP8_MAX_INV), factor: Math.fround(FP8_MAX / amax) };
  },
);
