import type { Rng } from "../harness/rng.js";

/**
 * How a DP group's tokens pick experts:
 * - uniform: K distinct experts, uniformly;
 * - hot: one hot expert in (almost) every token, the rest uniform;
 * - zipf: K distinct experts drawn by Zipf weights (s = 1.2) over a random ranking of experts;
 * - single: every token sends exactly one slot, to the same expert (the worst case for one rank);
 * - stacked: every token puts 3 or more of its slots (as many as fit, J = min(K, L) at most) on
 *   distinct experts of one rank, in random slot positions, the rest anywhere: the cases where the
 *   order of a partial's entries can change its bits. Drawn only where asked for (not in
 *   `ROUTING_STYLES`).
 */
export type RoutingStyle = "uniform" | "hot" | "zipf" | "single" | "stacked";

/** The styles ordinary cases draw from. */
export const ROUTING_STYLES: readonly RoutingStyle[] = ["uniform", "hot", "zipf", "single"];

export interface RoutingSpec {
  readonly style: RoutingStyle;
  /** Probability that a slot is -1 (unused). */
  readonly unused: number;
  /** Makes one token's every slot -1 (when the group has tokens). */
  readonly emptyToken: boolean;
  readonly seed: number;
}

/** Picks `k` distinct indices, index i with weight w[i] (Efraimidis-Spirakis keys u^(1/w)). */
function weightedDistinct(rng: Rng, weights: number[], k: number): number[] {
  const keyed = weights.map((w, i) => ({ i, key: Math.log(rng.next() + 1e-300) / w }));
  keyed.sort((a, b) => b.key - a.key);
  return keyed.slice(0, k).map((e) => e.i);
}

/**
 * The experts of one stacked token: 3..J distinct experts of one rank (rank r hosts experts
 * r*L .. r*L+L-1, core's block placement), the rest distinct experts drawn uniformly; the first
 * `stacked` entries are the rank's.
 */
function stackedExperts(
  rng: Rng,
  experts: number,
  K: number,
  L: number,
): { chosen: number[]; stacked: number } {
  const J = Math.min(K, L);
  const stacked = rng.int(Math.min(3, J), J);
  const rank = rng.int(0, experts / L - 1);
  const chosen = rng
    .permutation(L)
    .slice(0, stacked)
    .map((l) => rank * L + l);
  const rest = rng.permutation(experts).filter((e) => !chosen.includes(e));
  return { chosen: [...chosen, ...rest.slice(0, K - stacked)], stacked };
}

/**
 * topkIdx [T, K] for one group, and the slots' weights [T, K]. Unused slots get finite, non-zero
 * weights. `localExperts` (L) matters only to the stacked style, whose stacked slots are never -1.
 */
export function routeTokens(
  experts: number,
  K: number,
  T: number,
  spec: RoutingSpec,
  rng: Rng,
  localExperts = 1,
): { topkIdx: Int32Array; topkWeights: Float32Array } {
  const idx = new Int32Array(T * K);
  const w = new Float32Array(T * K);
  const ranking = rng.permutation(experts);
  const hot = ranking[0];
  const zipf = new Array<number>(experts);
  for (let r = 0; r < experts; r++) zipf[ranking[r]] = 1 / (r + 1) ** 1.2;
  const flat = new Array<number>(experts).fill(1);
  for (let t = 0; t < T; t++) {
    const row = idx.subarray(t * K, (t + 1) * K);
    if (spec.style === "single") {
      row.fill(-1);
      row[rng.int(0, K - 1)] = hot;
    } else if (spec.style === "stacked") {
      const { chosen, stacked } = stackedExperts(rng, experts, K, localExperts);
      const order = rng.permutation(K);
      for (let k = 0; k < K; k++) row[order[k]] = chosen[k];
      for (let k = stacked; k < K; k++) if (rng.chance(spec.unused)) row[order[k]] = -1;
    } else {
      let chosen: number[];
      if (spec.style === "zipf") chosen = weightedDistinct(rng, zipf, K);
      else chosen = weightedDistinct(rng, flat, K);
      if (spec.style === "hot" && !chosen.includes(hot) && rng.chance(0.9)) chosen[rng.int(0, K - 1)] = hot;
      // Put the experts in random slots (the hot one is not always slot 0).
      const order = rng.permutation(K);
      for (let k = 0; k < K; k++) row[order[k]] = chosen[k];
      for (let k = 0; k < K; k++) if (rng.chance(spec.unused)) row[k] = -1;
    }
    for (let k = 0; k < K; k++) w[t * K + k] = randomWeight(rng);
  }
  if (spec.emptyToken && T > 0) {
    const t = rng.int(0, T - 1);
    idx.fill(-1, t * K, (t + 1) * K);
  }
  return { topkIdx: idx, topkWeights: w };
}

function randomWeight(rng: Rng): number {
  const r = rng.next();
  if (r < 0.05) return 0;
  if (r < 0.1) return 1;
  return Math.fround((rng.next() * 2 - 0.5) * 2 ** rng.int(-3, 1));
}
