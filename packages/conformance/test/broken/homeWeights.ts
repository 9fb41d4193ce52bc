import {
  bf16ToNumber,
  blockPlacement,
  combineToken,
  encodeBf16,
  partialOf,
  referenceBackend,
} from "@switchyard/core";
import { recombiningRows } from "./recombine.js";

/** Broken backends of the home-weights mode declare what the reference does: both modes. */
const BOTH = referenceBackend.capabilities;

/**
 * Weights at the expert rank, as with `combineWeights: "expert"`: takes the weights at combineRecv
 * but reduces each rank's slots into a bf16 partial and sums the partials in rank order, so the
 * home never sees the unweighted rows in slot order.
 */
export const homeWeightsAsPartials = recombiningRows(
  "home-weights-as-partials",
  (H, idx, w, out, config) => combineToken(H, idx, w, blockPlacement(config).rankOf, out),
  BOTH,
);

/** Sums a token's used slots at home in descending slot order (fp32 from +0, rounded once). */
export const homeWeightsReversed = recombiningRows(
  "home-weights-reversed",
  (H, idx, w, out) => {
    const terms = [];
    for (let k = idx.length - 1; k >= 0; k--) if (idx[k] >= 0) terms.push({ w: w[k], o: out(k) });
    return partialOf(H, terms);
  },
  BOTH,
);

/**
 * Flushes fp32 subnormals to zero, as a device in flush-to-zero mode does: a subnormal weight, or a
 * product w * o under 2^-126, counts as +0 in the home's slot-order sum.
 */
export const homeWeightsFlushSubnormals = recombiningRows(
  "home-weights-flush-subnormals",
  (H, idx, w, out) => {
    const ftz = (v: number) => (Math.abs(v) < 2 ** -126 ? 0 : v);
    const acc = new Float32Array(H);
    for (let k = 0; k < idx.length; k++) {
      if (idx[k] < 0) continue;
      const o = out(k);
      const wk = ftz(Math.fround(w[k]));
      for (let h = 0; h < H; h++) acc[h] = Math.fround(acc[h] + ftz(Math.fround(wk * bf16ToNumber(o[h]))));
    }
    return encodeBf16(acc);
  },
  BOTH,
);
