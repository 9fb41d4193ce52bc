import {
  bf16ToNumber,
  blockPlacement,
  combineToken,
  encodeBf16,
  partialOf,
  slotsByRank,
  sumPartials,
} from "@switchyard/core";
import { recombiningRows } from "./recombine.js";

/** Sums the partials in descending rank order (the partials themselves are right). */
export const partialsDescending = recombiningRows("partials-descending", (H, idx, w, out, config) => {
  const byRank = slotsByRank(idx, blockPlacement(config).rankOf);
  const partials = byRank.map(([, slots]) =>
    partialOf(
      H,
      slots.map((k) => ({ w: w[k], o: out(k) })),
    ),
  );
  return sumPartials(H, partials.reverse());
});

/** Version 1's order: every slot in slot order in fp32, no per-rank partial rounded to bf16. */
export const noPartials = recombiningRows("no-partials", (H, idx, w, out) =>
  combineToken(H, idx, w, () => 0, out),
);

/** Sums each rank's entries in reverse slot order within its partial (the partials' order is right). */
export const partialSlotsReversed = recombiningRows("partial-slots-reversed", (H, idx, w, out, config) => {
  const byRank = slotsByRank(idx, blockPlacement(config).rankOf);
  const partials = byRank.map(([, slots]) =>
    partialOf(H, slots.map((k) => ({ w: w[k], o: out(k) })).reverse()),
  );
  return sumPartials(H, partials);
});

/**
 * Starts the home's sum from the first partial instead of +0: y is -0 where every partial is -0
 * (the protocol gives +0), equal everywhere else.
 */
export const sumFromFirstPartial = recombiningRows("sum-from-first-partial", (H, idx, w, out, config) => {
  const byRank = slotsByRank(idx, blockPlacement(config).rankOf);
  const partials = byRank.map(([, slots]) =>
    partialOf(
      H,
      slots.map((k) => ({ w: w[k], o: out(k) })),
    ),
  );
  const acc = new Float32Array(H);
  partials.forEach((p, r) => {
    for (let h = 0; h < H; h++)
      acc[h] = r === 0 ? bf16ToNumber(p[h]) : Math.fround(acc[h] + bf16ToNumber(p[h]));
  });
  return encodeBf16(acc);
});

/** Starts the home's sum at -0 (the additive identity of IEEE addition) instead of +0: y is -0 for a token without partials too. */
export const sumFromNegativeZero = recombiningRows("sum-from-negative-zero", (H, idx, w, out, config) => {
  const byRank = slotsByRank(idx, blockPlacement(config).rankOf);
  const acc = new Float32Array(H).fill(-0);
  for (const [, slots] of byRank) {
    const p = partialOf(
      H,
      slots.map((k) => ({ w: w[k], o: out(k) })),
    );
    for (let h = 0; h < H; h++) acc[h] = Math.fround(acc[h] + bf16ToNumber(p[h]));
  }
  return encodeBf16(acc);
});

/**
 * Correct, though written differently: each partial's accumulator starts from its first product
 * instead of +0. That changes only the sign of a zero partial, which the home's +0 start removes,
 * so y is bit-exact with the protocol's. Must pass.
 */
export const partialFromFirstProduct = recombiningRows(
  "partial-from-first-product",
  (H, idx, w, out, config) => {
    const byRank = slotsByRank(idx, blockPlacement(config).rankOf);
    const partials = byRank.map(([, slots]) => {
      const acc = new Float32Array(H);
      slots.forEach((k, i) => {
        const o = out(k);
        for (let h = 0; h < H; h++) {
          const p = Math.fround(Math.fround(w[k]) * bf16ToNumber(o[h]));
          acc[h] = i === 0 ? p : Math.fround(acc[h] + p);
        }
      });
      return encodeBf16(acc);
    });
    return sumPartials(H, partials);
  },
);
