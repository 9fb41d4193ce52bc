import {
  alignUp,
  type DispatchResult,
  defineConfig,
  type EpConfig,
  localExperts,
  type RankInput,
  ReferenceSession,
  scalesPerRow,
} from "@switchyard/core";
import { expertOutputsAny } from "./contiguous.js";
import { makeInputs, rng } from "./step.js";

/**
 * The soak's configs, one per layout, the same world otherwise: masked with bf16 -> fp8 dispatch,
 * contiguous with bf16 dispatch and expert blocks padded to 8 rows. Small enough that 100,000
 * checked steps fit in minutes, large enough that every rank has several experts per step.
 */
export function soakConfigs(ranks: number, layouts: readonly ("masked" | "contiguous")[]): EpConfig[] {
  return layouts.map((layout) =>
    layout === "masked"
      ? defineConfig({
          ranks,
          experts: 4 * ranks,
          topK: 4,
          hidden: 256,
          maxTokensPerRank: 32,
          dispatchDtype: "fp8-e4m3",
        })
      : defineConfig({
          ranks,
          experts: 4 * ranks,
          topK: 4,
          hidden: 256,
          maxTokensPerRank: 32,
          layout: "contiguous",
          expertAlignment: 8,
        }),
  );
}

/** What one rank must see in one input set: core's reference, packed for a fast comparison. */
export interface RankExpect {
  /** [L, R] rows per (local expert, source). */
  sourceCounts: Int32Array;
  /** Indices of the rows that hold data (and, contiguous, padding) in the layout's output region. */
  rows: Int32Array;
  /** [rows.length, 4] their meta; [rows.length, hidden] payload; [rows.length, S] scales or null. */
  meta: Int32Array;
  x: Uint16Array | Uint8Array;
  scales: Float32Array | null;
  /** [T, hidden] bf16 output of combine. */
  y: Uint16Array;
}

/** One rank's share of one input set: its inputs, its expert outputs, and what it must get back. */
export interface RankSet {
  tokens: number;
  input: RankInput;
  /** [rows, hidden] bf16, row-aligned with the reference dispatch result. */
  expertOut: Uint16Array;
  want: RankExpect;
}

/**
 * Token counts and routings that change every set: every 16th set has no tokens, one in eight the
 * maximum; a third of the sets route to a few hot experts (rank imbalance), the rest uniformly,
 * with 0 to 40 % of the slots unused.
 */
export function soakInputs(
  config: EpConfig,
  set: number,
  seed: number,
): { tokens: number; inputs: RankInput[] } {
  const rand = rng(seed * 7919 + set);
  const M = config.maxTokensPerRank;
  const tokens = set % 16 === 0 ? 0 : set % 8 === 1 ? M : 1 + Math.floor(rand() * M);
  const inputs = makeInputs(config, tokens, seed * 1009 + set, (set % 5) * 0.1);
  if (set % 3 === 2) {
    const E = config.experts;
    const K = config.topK;
    for (const input of new Set(inputs)) {
      const idx = input.topkIdx;
      for (let t = 0; t < tokens; t++) {
        const chosen = new Set<number>();
        for (let k = 0; k < K; k++) {
          if (idx[t * K + k] < 0) continue;
          let e: number;
          do
            e = Math.floor(E * rand() ** 3); // skewed towards expert 0
          while (chosen.has(e));
          chosen.add(e);
          idx[t * K + k] = e;
        }
      }
    }
  }
  return { tokens, inputs };
}

/**
 * The rows of a dispatch result that carry data: masked, each expert's rows packed at the front of
 * its block (protocol version 2); contiguous, the padded blocks.
 */
export function validRows(config: EpConfig, r: DispatchResult): Int32Array {
  const L = localExperts(config);
  const rows: number[] = [];
  for (let e = 0; e < L; e++) {
    if (config.layout === "masked") {
      for (let i = 0; i < r.expertCounts[e]; i++) rows.push(r.expertOffsets[e] + i);
    } else {
      const n = alignUp(r.expertCounts[e], config.expertAlignment);
      for (let i = 0; i < n; i++) rows.push(r.expertOffsets[e] + i);
    }
  }
  return Int32Array.from(rows);
}

function pack(config: EpConfig, r: DispatchResult, y: Uint16Array): RankExpect {
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const rows = validRows(config, r);
  const x = r.x instanceof Uint8Array ? new Uint8Array(rows.length * H) : new Uint16Array(rows.length * H);
  const meta = new Int32Array(rows.length * 4);
  const scales = S && r.scales ? new Float32Array(rows.length * S) : null;
  rows.forEach((row, i) => {
    x.set(r.x.subarray(row * H, (row + 1) * H), i * H);
    meta.set(r.meta.subarray(row * 4, row * 4 + 4), i * 4);
    if (scales && r.scales) scales.set(r.scales.subarray(row * S, (row + 1) * S), i * S);
  });
  return { sourceCounts: r.sourceCounts.slice(), rows, meta, x, scales, y };
}

/** `sets` input sets of `config`, each run through core's reference session: [set][rank]. */
export async function buildSoakSets(config: EpConfig, sets: number, seed: number): Promise<RankSet[][]> {
  const out: RankSet[][] = [];
  const R = config.ranks;
  for (let set = 0; set < sets; set++) {
    const { tokens, inputs } = soakInputs(config, set, seed);
    const s = new ReferenceSession(config);
    for (let r = 0; r < R; r++) await s.dispatchSend(r, inputs[r]);
    const results: DispatchResult[] = [];
    for (let r = 0; r < R; r++) results.push(await s.dispatchRecv(r));
    const outs = results.map((res, r) => expertOutputsAny(config, r, res));
    for (let r = 0; r < R; r++) await s.combineSend(r, outs[r]);
    const ys: Uint16Array[] = [];
    for (let r = 0; r < R; r++) ys.push(await s.combineRecv(r));
    await s.destroy();
    out.push(
      inputs.map((input, r) => ({
        tokens,
        input,
        expertOut: outs[r],
        want: pack(config, results[r], ys[r]),
      })),
    );
  }
  return out;
}

/** Which (layout, set) step `i` runs: layouts alternate, sets rotate with a stride coprime to 64. */
export function soakStep(i: number, layouts: number, sets: number): { layout: number; set: number } {
  return { layout: i % layouts, set: (Math.floor(i / layouts) * 37 + i) % sets };
}

/**
 * Differences between a rank's device output and what it must be (empty when equal): counts, then
 * each data row's meta, payload and scales (a padding row's meta alone: its payload and scales are
 * unspecified), then y. At most `limit` messages.
 */
export function compareSoak(
  want: RankExpect,
  got: {
    counts: Int32Array;
    meta: Int32Array;
    x: Uint16Array | Uint8Array;
    scales: Float32Array | null;
    y: Uint16Array;
  },
  hidden: number,
  limit = 3,
): string[] {
  const out: string[] = [];
  const add = (m: string) => out.length < limit && out.push(m);
  for (let i = 0; i < want.sourceCounts.length; i++)
    if (got.counts[i] !== want.sourceCounts[i])
      add(`counts[${i}] = ${got.counts[i]}, reference ${want.sourceCounts[i]}`);
  if (out.length) return out;
  const H = hidden;
  const S = want.scales ? want.scales.length / Math.max(1, want.rows.length) : 0;
  for (let i = 0; i < want.rows.length && out.length < limit; i++) {
    const row = want.rows[i];
    for (let j = 0; j < 4; j++)
      if (got.meta[row * 4 + j] !== want.meta[i * 4 + j]) {
        add(`row ${row}: meta differs`);
        break;
      }
    if (want.meta[i * 4] === -1) continue; // padding
    for (let h = 0; h < H; h++)
      if (got.x[row * H + h] !== want.x[i * H + h]) {
        add(`row ${row}: payload differs at ${h}`);
        break;
      }
    if (want.scales && got.scales)
      for (let j = 0; j < S; j++)
        if (!Object.is(got.scales[row * S + j], want.scales[i * S + j])) {
          add(`row ${row}: scale ${j} differs`);
          break;
        }
  }
  for (let i = 0; i < want.y.length; i++)
    if (got.y[i] !== want.y[i]) {
      add(`y differs at ${i} (${got.y[i]} vs ${want.y[i]})`);
      break;
    }
  return out;
}
