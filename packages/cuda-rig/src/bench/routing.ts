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

/**
 * Bytes of one dispatched row on the wire (protocol version 2: one route record): payload, fp32
 * block scales (fp8), and the record's W = 2 + 4 min(K, L) i32 words.
 */
export function dispatchRowBytes(config: EpConfig): number {
  const J = Math.min(config.topK, localExperts(config));
  return (
    config.hidden * dtypeBytes(config.dispatchDtype) +
    scalesPerRow(config, config.dispatchDtype) * 4 +
    4 * (2 + 4 * J)
  );
}

/** Ranks token t of a [T, K] topkIdx routes to (each once). */
function ranksOfToken(topkIdx: Int32Array, t: number, K: number, L: number): Set<number> {
  const out = new Set<number>();
  for (let k = 0; k < K; k++) {
    const e = topkIdx[t * K + k];
    if (e >= 0) out.add(Math.floor(e / L));
  }
  return out;
}

/**
 * What `rank` moves to other ranks in one step (see BYTES_COUNTED), given every rank's routing:
 * dispatch rows (route records: one per token and other rank it routes to), combine rows (one
 * partial per token of another rank that routes here). DP groups are not modelled (the bench runs
 * dpSize 1).
 */
export function remoteTraffic(config: EpConfig, routings: readonly Routing[], rank: number) {
  const L = localExperts(config);
  const K = config.topK;
  let dispatchRows = 0;
  const mine = routings[rank].topkIdx;
  for (let t = 0; t < mine.length / K; t++) {
    for (const r of ranksOfToken(mine, t, K, L)) if (r !== rank) dispatchRows++;
  }
  let combineRows = 0;
  routings.forEach((r, src) => {
    if (src === rank) return;
    for (let t = 0; t < r.topkIdx.length / K; t++)
      if (ranksOfToken(r.topkIdx, t, K, L).has(rank)) combineRows++;
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
