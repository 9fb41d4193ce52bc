import {
  combineWeightsOf,
  type DispatchInput,
  type DispatchResult,
  type EpConfig,
  encodeBf16,
  type RankHeap,
  type RankInput,
  ReferenceSession,
  type Session,
  seededRandom,
} from "@switchyard/core";
import { expect } from "vitest";
import { WebGpuSession, type WebGpuSessionOptions } from "../src/session.js";

/** The seeded generator every check replays from (core's mulberry32). */
export const rng = seededRandom;

export function int(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

function shuffle<T>(rand: () => number, a: T[]): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = int(rand, 0, i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Random bf16 bits: mostly moderate normal values, sometimes zeros, -0, tiny or huge values, Inf, NaN. */
function bf16Value(rand: () => number, specials: boolean): number {
  const r = rand();
  if (specials && r < 0.02) return [0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x0001, 0x7f7f][int(rand, 0, 6)];
  if (specials && r < 0.04) return int(rand, 0, 0xffff) & 0xff7f; // anything finite-ish, any exponent
  return encodeBf16([(rand() * 2 - 1) * 2 ** int(rand, -6, 6)])[0];
}

/** Inputs for one step: each DP group's tokens (T random in [0, M] unless given) shared by its ranks. */
export function randomInputs(
  config: EpConfig,
  rand: () => number,
  options: { tokens?: number; specials?: boolean; unused?: number } = {},
): RankInput[] {
  const { experts: E, topK: K, hidden: H, maxTokensPerRank: M } = config;
  const S = H / 128;
  const groups: RankInput[] = [];
  for (let g = 0; g < config.ranks / config.dpSize; g++) {
    const T = options.tokens ?? int(rand, 0, M);
    const topkIdx = new Int32Array(T * K);
    const topkWeights = new Float32Array(T * K);
    for (let t = 0; t < T; t++) {
      const chosen = shuffle(
        rand,
        Array.from({ length: E }, (_, e) => e),
      ).slice(0, K);
      for (let k = 0; k < K; k++) {
        topkIdx[t * K + k] = rand() < (options.unused ?? 0.15) ? -1 : chosen[k];
        topkWeights[t * K + k] = Math.fround((rand() * 2 - 0.5) * 2 ** int(rand, -3, 1));
      }
    }
    let input: RankInput;
    if (config.inputDtype === "fp8-e4m3") {
      const x = Uint8Array.from({ length: T * H }, () => int(rand, 0, 255));
      const scales = Float32Array.from(
        { length: T * S },
        () => 2 ** int(rand, -10, 4) * (rand() < 0.5 ? 1 : 1.5),
      );
      input = { x, scales, topkIdx, topkWeights };
    } else {
      const x = Uint16Array.from({ length: T * H }, () => bf16Value(rand, options.specials ?? true));
      input = { x, topkIdx, topkWeights };
    }
    groups.push(input);
  }
  return Array.from({ length: config.ranks }, (_, r) => groups[Math.floor(r / config.dpSize)]);
}

/** Random expert outputs [rows, hidden] bf16, finite unless `specials` (the same array goes to both sessions). */
export function randomExpertOut(
  rows: number,
  hidden: number,
  rand: () => number,
  specials = false,
): Uint16Array {
  return Uint16Array.from({ length: rows * hidden }, () => bf16Value(rand, specials));
}

/** The reference session's heaps (private in core; read here to compare memory byte for byte). */
export function referenceHeaps(ref: ReferenceSession): RankHeap[] {
  return (ref as unknown as { heaps: RankHeap[] }).heaps;
}

type Action = { kind: "send" | "recv" | "csend" | "crecv"; rank: number; step: number };

/**
 * A random order of every call of `steps` steps that keeps the protocol's rules: within a step all
 * dispatchSends before any dispatchRecv, a rank's combineSend after its dispatchRecv, all
 * combineSends before any combineRecv; a rank's next step after its combineRecv.
 */
export function schedule(ranks: number, steps: number, rand: () => number): Action[] {
  const kinds = ["send", "recv", "csend", "crecv"] as const;
  const next = new Array(ranks).fill(0); // index into the rank's own sequence (step * 4 + kind)
  const done = new Map<string, number>();
  const count = (kind: string, step: number) => done.get(`${kind}${step}`) ?? 0;
  const out: Action[] = [];
  while (out.length < ranks * steps * 4) {
    const ready = [];
    for (let r = 0; r < ranks; r++) {
      if (next[r] >= steps * 4) continue;
      const step = Math.floor(next[r] / 4);
      const kind = kinds[next[r] % 4];
      if (kind === "recv" && count("send", step) < ranks) continue;
      if (kind === "crecv" && count("csend", step) < ranks) continue;
      ready.push({ kind, rank: r, step });
    }
    const a = ready[int(rand, 0, ready.length - 1)];
    out.push(a);
    next[a.rank]++;
    done.set(`${a.kind}${a.step}`, count(a.kind, a.step) + 1);
  }
  return out;
}

/** Checks a dispatch result against the reference's: counts, offsets, and every row that carries meaning. */
export function expectSameDispatch(
  config: EpConfig,
  got: DispatchResult,
  want: DispatchResult,
  where: string,
): void {
  expect(Array.from(got.sourceCounts), `${where} sourceCounts`).toEqual(Array.from(want.sourceCounts));
  expect(Array.from(got.expertCounts), `${where} expertCounts`).toEqual(Array.from(want.expertCounts));
  expect(Array.from(got.expertOffsets), `${where} expertOffsets`).toEqual(Array.from(want.expertOffsets));
  expect(got.scales === null, `${where} scales present`).toBe(want.scales === null);
  const L = config.experts / config.ranks;
  const H = config.hidden;
  const S = H / 128;
  const rows: number[] = [];
  for (let e = 0; e < L; e++) {
    // masked: expert e's rows packed at the front of its block; contiguous: padding rows included
    const n =
      config.layout === "masked"
        ? want.expertCounts[e]
        : Math.ceil(want.expertCounts[e] / config.expertAlignment) * config.expertAlignment;
    for (let i = 0; i < n; i++) rows.push(want.expertOffsets[e] + i);
  }
  for (const row of rows) {
    const at = `${where} row ${row}`;
    expect(Array.from(got.meta.subarray(row * 4, row * 4 + 4)), `${at} meta`).toEqual(
      Array.from(want.meta.subarray(row * 4, row * 4 + 4)),
    );
    expect(Array.from(got.x.subarray(row * H, (row + 1) * H)), `${at} x`).toEqual(
      Array.from(want.x.subarray(row * H, (row + 1) * H)),
    );
    if (want.scales && got.scales) {
      expect(Array.from(got.scales.subarray(row * S, (row + 1) * S)), `${at} scales`).toEqual(
        Array.from(want.scales.subarray(row * S, (row + 1) * S)),
      );
    }
  }
}

/** Every byte of every rank's heap and local buffer equals the reference's. */
export async function expectSameHeaps(
  gpu: WebGpuSession,
  ref: ReferenceSession,
  where: string,
): Promise<void> {
  const heaps = referenceHeaps(ref);
  for (let r = 0; r < gpu.config.ranks; r++) {
    const got = await gpu.readHeap(r);
    for (const part of ["symmetric", "local"] as const) {
      const a = new Uint8Array(got[part]);
      const b = new Uint8Array(heaps[r][part]);
      expect(a.length).toBe(b.length);
      let first = -1;
      for (let i = 0; i < a.length; i++) {
        if (a[i] !== b[i]) {
          first = i;
          break;
        }
      }
      if (first >= 0) {
        const region = Object.values(gpu.layout.regions).find(
          (g) =>
            g.symmetric === (part === "symmetric") &&
            g.bytes > 0 &&
            first >= g.offset &&
            first < g.offset + g.bytes,
        );
        expect.fail(
          `${where}: rank ${r} ${part} heap differs at byte ${first} (region ${region?.name ?? "padding"})`,
        );
      }
    }
  }
}

export async function createPair(
  config: EpConfig,
  options: WebGpuSessionOptions = {},
): Promise<{ gpu: WebGpuSession; ref: ReferenceSession }> {
  return { gpu: await WebGpuSession.create(config, options), ref: new ReferenceSession(config) };
}

/**
 * What a rank passes to dispatch and to combineRecv: with combineWeights home the input without
 * its weights, and weights of the rank's own for combineRecv (each rank of a DP group draws its
 * own, as core allows); with expert the input as it is and none.
 */
export function homeSplit(
  config: EpConfig,
  input: RankInput,
  rand: () => number,
): { dispatch: DispatchInput; weights?: Float32Array } {
  if (combineWeightsOf(config) !== "home") return { dispatch: input };
  const { topkWeights, ...dispatch } = input;
  const weights = Float32Array.from(topkWeights, () =>
    Math.fround((rand() * 2 - 0.5) * 2 ** int(rand, -3, 1)),
  );
  return { dispatch, weights };
}

/**
 * Runs `steps` random steps on the WebGPU session and the reference in one random interleaving
 * and checks every result (and, with `heaps`, all memory at the end) against the reference.
 * combineWeights home configs dispatch without weights and pass each rank's own to combineRecv.
 */
export async function runAgainstReference(
  config: EpConfig,
  seed: number,
  steps: number,
  options: WebGpuSessionOptions & { heaps?: boolean; tokens?: number; specialOutputs?: boolean } = {},
): Promise<void> {
  const rand = rng(seed);
  const { gpu, ref } = await createPair(config, options);
  try {
    const inputs = Array.from({ length: steps }, () =>
      randomInputs(config, rand, { tokens: options.tokens }).map((input) => homeSplit(config, input, rand)),
    );
    const rows = gpu.layout.rows;
    for (const a of schedule(config.ranks, steps, rand)) {
      const where = `step ${a.step} ${a.kind}(rank ${a.rank})`;
      if (a.kind === "send") {
        await gpu.dispatchSend(a.rank, inputs[a.step][a.rank].dispatch);
        await ref.dispatchSend(a.rank, inputs[a.step][a.rank].dispatch);
      } else if (a.kind === "recv") {
        expectSameDispatch(config, await gpu.dispatchRecv(a.rank), await ref.dispatchRecv(a.rank), where);
      } else if (a.kind === "csend") {
        const out = randomExpertOut(rows, config.hidden, rand, options.specialOutputs);
        await gpu.combineSend(a.rank, out);
        await ref.combineSend(a.rank, out);
      } else {
        const weights = inputs[a.step][a.rank].weights;
        const y = await gpu.combineRecv(a.rank, weights);
        const want = await ref.combineRecv(a.rank, weights);
        expect(Array.from(y), `${where} y`).toEqual(Array.from(want));
      }
    }
    if (options.heaps) await expectSameHeaps(gpu, ref, `after ${steps} steps`);
  } finally {
    await gpu.destroy();
    await ref.destroy();
  }
}

/** Drives one whole step on any session in rank order; returns the y of each rank. */
export async function runStep(
  session: Session,
  inputs: RankInput[],
  expertOut: Uint16Array,
): Promise<Uint16Array[]> {
  const R = session.config.ranks;
  for (let r = 0; r < R; r++) await session.dispatchSend(r, inputs[r]);
  for (let r = 0; r < R; r++) {
    await session.dispatchRecv(r);
    await session.combineSend(r, expertOut);
  }
  const ys: Uint16Array[] = [];
  for (let r = 0; r < R; r++) ys.push(await session.combineRecv(r));
  return ys;
}
