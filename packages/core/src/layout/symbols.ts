import { type EpConfig, localExperts, scalesPerRow } from "../config.js";

/** Metadata words per delivered row: (source rank, source token, top-k slot, local expert). */
export const META_WORDS = 4;

/**
 * The symbols region shapes are written in (`REGION_TABLE`), each with what it stands for. The C
 * layout computes the same values by hand (layout.c's `symbol_value`, which fails to compile
 * while a symbol here has no case there).
 */
export const LAYOUT_SYMBOLS = {
  R: "ranks",
  L: "local experts per rank: experts / ranks",
  E: "experts",
  M: "maxTokensPerRank",
  H: "hidden",
  K: "topK",
  S: "fp32 scales per row: hidden / 128 with fp8 dispatch, else 0",
  J: "min(K, L): the most slots one token has on one rank",
  W: "2 + 4 * J: i32 words of a route record",
  N: "R * M * J + L * (expertAlignment - 1): delivered rows at most (contiguous)",
  META_WORDS: `${META_WORDS}: metadata words per delivered row`,
} as const;

export type LayoutSymbol = keyof typeof LAYOUT_SYMBOLS;

/** i32 words of a route record with J entries: srcToken, n, then (localExpert, slot, index, weight bits) each. */
export function routeWordsOf(slotsPerRank: number): number {
  return 2 + 4 * slotsPerRank;
}

/** The value of every symbol for a (validated) config. */
export function layoutSymbols(config: Readonly<EpConfig>): Readonly<Record<LayoutSymbol, number>> {
  const R = config.ranks;
  const L = localExperts(config);
  const M = config.maxTokensPerRank;
  const J = Math.min(config.topK, L);
  return {
    R,
    L,
    E: config.experts,
    M,
    H: config.hidden,
    K: config.topK,
    S: scalesPerRow(config, config.dispatchDtype),
    J,
    W: routeWordsOf(J),
    N: R * M * J + L * (config.expertAlignment - 1),
    META_WORDS,
  };
}
