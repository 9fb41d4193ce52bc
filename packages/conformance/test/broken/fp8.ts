import { FP8_MAX, scaleExponent } from "@switchyard/core";
import { requantizingBackend } from "./requantize.js";

/**
 * Quantises with a strict block-scale rule, amax < 448 * 2^s instead of <=: a block whose largest
 * magnitude is exactly 448 * 2^s gets scale 2^(s+1) (its codes halved). Every other block is right,
 * so only payloads on the rule's boundary show it.
 */
export const strictBlockScale = requantizingBackend(
  "strict-block-scale",
  (config) => config.dispatchDtype === "fp8-e4m3",
  (amax) => {
    const s = scaleExponent(amax);
    if (amax === 0 || amax !== FP8_MAX * 2 ** s) return null;
    return { scale: 2 ** (s + 1), factor: 2 ** -(s + 1) };
  },
);
