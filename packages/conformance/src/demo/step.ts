import {
  type Backend,
  bf16ToNumber,
  deliveredRows,
  dequantizeRowsToBf16,
  type EpConfig,
  encodeBf16,
  type RankInput,
  referenceCombine,
  referenceDispatch,
  seededRandom,
} from "@switchyard/core";
import { combineRecvWeights, dispatchInputOf } from "../harness/weightsAt.js";

/** The seeded generator every check replays from (core's mulberry32). */
export const rng = seededRandom;

/** Router-like inputs: Zipf-skewed expert choice (a few hot experts), softmax-ish weights. */
export function demoInputs(config: EpConfig, tokens: number, seed: number): RankInput[] {
  const rand = rng(seed);
  const E = config.experts;
  const K = config.topK;
  const zipf = Array.from({ length: E }, (_, e) => 1 / (e + 1));
  const total = zipf.reduce((a, b) => a + b, 0);
  const perm = Array.from({ length: E }, (_, i) => i).sort(() => rand() - 0.5);
  const pick = () => {
    let u = rand() * total;
    for (let e = 0; e < E; e++) {
      u -= zipf[e];
      if (u <= 0) return perm[e];
    }
    return perm[E - 1];
  };
  const groups: RankInput[] = [];
  for (let g = 0; g < config.ranks / config.dpSize; g++) {
    const topkIdx = new Int32Array(tokens * K);
    const topkWeights = new Float32Array(tokens * K);
    for (let t = 0; t < tokens; t++) {
      const chosen = new Set<number>();
      while (chosen.size < K) chosen.add(pick());
      const ws = [...chosen].map(() => rand() + 0.1);
      const sum = ws.reduce((a, b) => a + b, 0);
      [...chosen].forEach((e, k) => {
        topkIdx[t * K + k] = e;
        topkWeights[t * K + k] = ws[k] / sum;
      });
    }
    const x = encodeBf16(Array.from({ length: tokens * config.hidden }, () => (rand() - 0.5) * 4));
    groups.push({ x, topkIdx, topkWeights });
  }
  // Every rank of a DP group passes the same tokens.
  return Array.from({ length: config.ranks }, (_, r) => groups[Math.floor(r / config.dpSize)]);
}

export interface DemoOutcome {
  /** rows received by each rank, [R] */
  rowsPerRank: number[];
  /** rows received by each global expert, [E] */
  rowsPerExpert: number[];
  /** rows from each source rank to each destination rank, [R][R] */
  traffic: number[][];
  /** rows from each source rank to each global expert, [R][E] */
  routing: number[][];
  dispatchMismatches: number;
  combineMismatches: number;
  maxCombineError: number;
  ms: number;
}

/**
 * One MoE step on `backend` with identity experts (each expert returns its input, dequantised
 * to bf16), checked against core's reference: dispatch rows bit for bit, combine values.
 */
export async function runDemoStep(
  backend: Backend,
  config: EpConfig,
  inputs: RankInput[],
): Promise<DemoOutcome> {
  const R = config.ranks;
  const L = config.experts / R;
  const H = config.hidden;
  const session = await backend.createSession(config);
  const started = performance.now();
  try {
    for (let r = 0; r < R; r++) await session.dispatchSend(r, dispatchInputOf(config, inputs[r]));
    const expected = referenceDispatch(config, inputs);
    const rowsPerRank = new Array(R).fill(0);
    const rowsPerExpert = new Array(config.experts).fill(0);
    const traffic = Array.from({ length: R }, () => new Array(R).fill(0));
    const routing = Array.from({ length: R }, () => new Array(config.experts).fill(0));
    let dispatchMismatches = 0;
    for (let r = 0; r < R; r++) {
      const result = await session.dispatchRecv(r);
      const rows = deliveredRows(config, result);
      const out = new Uint16Array(session.layout.rows * H);
      const seen = new Map<string, number>();
      for (const { row, localExpert } of rows) {
        const [src, token, slot] = result.meta.subarray(row * 4, row * 4 + 3);
        seen.set(`${localExpert}/${src}/${token}/${slot}`, row);
        rowsPerRank[r]++;
        rowsPerExpert[r * L + localExpert]++;
        traffic[src][r]++;
        routing[src][r * L + localExpert]++;
        const x = result.x.subarray(row * H, (row + 1) * H);
        const S = H / 128;
        out.set(
          result.scales
            ? dequantizeRowsToBf16(x as Uint8Array, result.scales.subarray(row * S, (row + 1) * S), H)
            : (x as Uint16Array),
          row * H,
        );
      }
      for (let e = 0; e < L; e++) {
        for (const want of expected[r][e]) {
          const row = seen.get(`${e}/${want.srcRank}/${want.srcToken}/${want.slot}`);
          const got = row === undefined ? undefined : result.x.subarray(row * H, (row + 1) * H);
          if (!got || got.some((v, i) => v !== want.x[i])) dispatchMismatches++;
        }
      }
      dispatchMismatches += Math.abs(rows.length - expected[r].flat().length);
      await session.combineSend(r, out);
    }
    const byKey = new Map(
      expected.flatMap((rank, r) =>
        rank.flatMap((rows, e) =>
          rows.map((w) => [`${r * L + e}/${w.srcRank}/${w.srcToken}/${w.slot}`, w] as const),
        ),
      ),
    );
    const identity = (e: number, src: number, token: number, slot: number) => {
      const row = byKey.get(`${e}/${src}/${token}/${slot}`)!;
      return row.scales ? dequantizeRowsToBf16(row.x as Uint8Array, row.scales, H) : (row.x as Uint16Array);
    };
    const yRef = referenceCombine(config, inputs, identity);
    let combineMismatches = 0;
    let maxCombineError = 0;
    for (let r = 0; r < R; r++) {
      const y = await session.combineRecv(r, combineRecvWeights(config, inputs[r]));
      for (let i = 0; i < y.length; i++) {
        if (y[i] !== yRef[r][i]) combineMismatches++;
        maxCombineError = Math.max(maxCombineError, Math.abs(bf16ToNumber(y[i]) - bf16ToNumber(yRef[r][i])));
      }
    }
    return {
      rowsPerRank,
      rowsPerExpert,
      traffic,
      routing,
      dispatchMismatches,
      combineMismatches,
      maxCombineError,
      ms: performance.now() - started,
    };
  } finally {
    await session.destroy();
  }
}
