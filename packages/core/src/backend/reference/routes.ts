import type { EpConfig } from "../../config.js";
import { ProtocolError } from "../../errors.js";
import { blockPlacement } from "../../placement.js";
import { ownerOf } from "../../rows.js";
import { type DispatchInput, tokensOf } from "../../tensors.js";

/** One slot of a token on a destination rank: a route record entry. */
export interface RouteEntry {
  localExpert: number;
  slot: number;
  /** How many earlier tokens of the source (this step) the local expert received. */
  index: number;
  weight: number;
}

/** One token's route record for one destination rank. */
export interface RouteRecord {
  srcToken: number;
  /** Entries in ascending slot order, 1..J of them. */
  entries: RouteEntry[];
}

/** What a source sends this step: records per destination rank, and its row count per expert [E]. */
export interface RoutePlan {
  records: RouteRecord[][];
  counts: Int32Array;
}

/**
 * The route records of source `src`: for each token it owns (ascending) and each destination
 * rank its used slots name, one record listing those slots in slot order (weight +0 where the
 * input has no weights: combineWeights "home"). Input validated.
 */
export function planRoutes(config: EpConfig, src: number, input: DispatchInput): RoutePlan {
  const placement = blockPlacement(config);
  const K = config.topK;
  const records: RouteRecord[][] = Array.from({ length: config.ranks }, () => []);
  const counts = new Int32Array(config.experts);
  const T = tokensOf(config, input);
  for (let t = 0; t < T; t++) {
    if (ownerOf(config, src, t) !== src) continue;
    const byRank = new Map<number, RouteEntry[]>();
    for (let k = 0; k < K; k++) {
      const e = input.topkIdx[t * K + k];
      if (e < 0) continue;
      const entry = {
        localExpert: placement.localIndexOf(e),
        slot: k,
        index: counts[e]++,
        // With combineWeights "home" dispatch carries no weights: the word is +0.
        weight: input.topkWeights?.[t * K + k] ?? 0,
      };
      const dst = placement.rankOf(e);
      const list = byRank.get(dst);
      if (list) list.push(entry);
      else byRank.set(dst, [entry]);
    }
    for (const [dst, entries] of byRank) records[dst].push({ srcToken: t, entries });
  }
  return { records, counts };
}

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/** Writes a record as its W i32 words at `at` (entries past n are left as they are). */
export function writeRecord(words: Int32Array, at: number, record: RouteRecord): void {
  words[at] = record.srcToken;
  words[at + 1] = record.entries.length;
  record.entries.forEach((e, i) => {
    f32[0] = e.weight;
    words.set([e.localExpert, e.slot, e.index, i32[0]], at + 2 + 4 * i);
  });
}

/**
 * Reads record j from `src` and checks it against the layout and the announced counts
 * (`counts[e * R + src]`): n in 1..J, token in [0, M), slot in [0, K), local expert in [0, L),
 * index below the expert's count. Anything else is a ProtocolError naming rank, stage and peer.
 */
export function readRecord(
  config: EpConfig,
  words: Int32Array,
  at: number,
  where: { rank: number; stage: string; src: number; j: number; slotsPerRank: number; counts: Int32Array },
): RouteRecord {
  const R = config.ranks;
  const L = config.experts / R;
  const bad = (detail: string) =>
    new ProtocolError(
      where.rank,
      where.stage,
      "dispatchRoutes",
      `record ${where.j} from rank ${where.src}: ${detail}`,
      where.src,
    );
  const srcToken = words[at];
  const n = words[at + 1];
  if (!(srcToken >= 0 && srcToken < config.maxTokensPerRank))
    throw bad(`token ${srcToken} outside [0, ${config.maxTokensPerRank})`);
  if (!(n >= 1 && n <= where.slotsPerRank)) throw bad(`${n} entries, expected 1..${where.slotsPerRank}`);
  const entries: RouteEntry[] = [];
  for (let i = 0; i < n; i++) {
    const [localExpert, slot, index, bits] = words.subarray(at + 2 + 4 * i, at + 6 + 4 * i);
    if (!(localExpert >= 0 && localExpert < L))
      throw bad(`entry ${i}: local expert ${localExpert} outside [0, ${L})`);
    if (!(slot >= 0 && slot < config.topK)) throw bad(`entry ${i}: slot ${slot} outside [0, ${config.topK})`);
    const count = where.counts[localExpert * R + where.src];
    if (!(index >= 0 && index < count))
      throw bad(
        `entry ${i}: index ${index} for local expert ${localExpert}, which was announced ${count} rows`,
      );
    i32[0] = bits;
    entries.push({ localExpert, slot, index, weight: f32[0] });
  }
  return { srcToken, entries };
}
