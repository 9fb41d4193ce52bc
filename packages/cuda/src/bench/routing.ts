import { dtypeBytes, type EpConfig, localExperts, scalesPerRow } from "@switchyard/core";
import { rng } from "../checks/step.js";

/** One rank's router output for one step. */
export interface Routing {
  /** [T, K] distinct experts per token, uniform at random (every slot used). */
  topkIdx: Int32Array;
  /** [T, K] in (0, 1]. */
  topkWeights: Float32Array;
}

/**
 * The routing of `rank` for input set `set`: T = maxTokensPerRank tokens, K distinct experts each,
 * uniform over all experts (so about (R - 1) / R of the rows leave the rank). Every rank can
 * compute every other rank's routing, which the byte counts need.
 */
export function benchRouting(config: EpConfig, seed: number, set: number, rank: number): Routing {
  const rand = rng(((seed * 1000003) ^ (set * 7919) ^ (rank * 104729)) >>> 0);
  const T = config.maxTokensPerRank;
  const K = config.topK;
  const E = config.experts;
  const topkIdx = new Int32Array(T * K);
  const topkWeights = new Float32Array(T * K);
  const chosen = new Set<number>();
  for (let t = 0; t < T; t++) {
    chosen.clear();
    for (let k = 0; k < K; k++) {
      let e: number;
      do e = Math.floor(rand() * E);
      while (chosen.has(e));
      chosen.add(e);
      topkIdx[t * K + k] = e;
      topkWeights[t * K + k] = Math.fround(rand() * 0.999 + 0.001);
    }
  }
  return { topkIdx, topkWeights };
}

/** Bytes of one dispatched row on the wire: payload, fp32 block scales (fp8), 16 meta bytes. */
export function dispatchRowBytes(config: EpConfig): number {
  return (
    config.hidden * dtypeBytes(config.dispatchDtype) + scalesPerRow(config, config.dispatchDtype) * 4 + 16
  );
}

/**
 * What `rank` moves to other ranks in one step (see BYTES_COUNTED), given every rank's routing:
 * dispatch rows to experts on other ranks, combine rows its experts send back to other ranks.
 * DP groups are not modelled (the bench runs dpSize 1).
 */
export function remoteTraffic(config: EpConfig, routings: readonly Routing[], rank: number) {
  const L = localExperts(config);
  let dispatchRows = 0;
  for (const e of routings[rank].topkIdx) if (e >= 0 && Math.floor(e / L) !== rank) dispatchRows++;
  let combineRows = 0;
  routings.forEach((r, src) => {
    if (src === rank) return;
    for (const e of r.topkIdx) if (e >= 0 && Math.floor(e / L) === rank) combineRows++;
  });
  return {
    dispatchRows,
    combineRows,
    dispatchBytes: dispatchRows * dispatchRowBytes(config),
    combineBytes: combineRows * config.hidden * 2,
  };
}

/** Rows `rank` receives per (local expert, source): counts [L, R], as dispatch recv must report them. */
export function expectedCounts(config: EpConfig, routings: readonly Routing[], rank: number): Int32Array {
  const L = localExperts(config);
  const R = config.ranks;
  const counts = new Int32Array(L * R);
  routings.forEach((r, src) => {
    for (const e of r.topkIdx) if (e >= 0 && Math.floor(e / L) === rank) counts[(e % L) * R + src]++;
  });
  return counts;
}

/** remoteTraffic's bytes averaged over the rotated input sets (routings[set][rank]). */
export function meanRemoteBytes(config: EpConfig, sets: readonly (readonly Routing[])[], rank: number) {
  let dispatchBytes = 0;
  let combineBytes = 0;
  for (const routings of sets) {
    const t = remoteTraffic(config, routings, rank);
    dispatchBytes += t.dispatchBytes / sets.length;
    combineBytes += t.combineBytes / sets.length;
  }
  return { dispatchBytes, combineBytes };
}

/** The first count a rank reported that its routing does not give, as an error line; null when all agree. */
export function countsMismatch(
  what: string,
  config: EpConfig,
  routings: readonly Routing[],
  rank: number,
  got: ArrayLike<number>,
): string | null {
  const want = expectedCounts(config, routings, rank);
  const bad = want.findIndex((v, i) => got[i] !== v);
  return bad < 0 ? null : `rank ${rank}: ${what}[${bad}] = ${got[bad]}, the routing gives ${want[bad]}`;
}
