import type { EpConfig } from "./config.js";

/**
 * Where each expert lives. The default puts experts in contiguous blocks (rank r hosts
 * experts r*L .. r*L+L-1); a table-driven placement (for load balancing) can replace it.
 */
export interface ExpertPlacement {
  /** Local experts per rank (the same on every rank). */
  readonly localExperts: number;
  /** The rank hosting global expert `expert`. */
  rankOf(expert: number): number;
  /** The index of global expert `expert` among its rank's local experts. */
  localIndexOf(expert: number): number;
  /** The global expert that is local expert `local` of `rank`. */
  globalExpert(rank: number, local: number): number;
}

export function blockPlacement(config: EpConfig): ExpertPlacement {
  const L = config.experts / config.ranks;
  return {
    localExperts: L,
    rankOf: (e) => Math.floor(e / L),
    localIndexOf: (e) => e % L,
    globalExpert: (r, l) => r * L + l,
  };
}
