import { blockPlacement, combineToken, partialOf, slotsByRank, sumPartials } from "@switchyard/core";
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
