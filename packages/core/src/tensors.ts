import { scaleFormatOf } from "./codec/scaleFormat.js";
import { ue8m0Byte } from "./codec/ue8m0.js";
import { combineWeightsOf } from "./combineWeights.js";
import { type EpConfig, scalesPerRow } from "./config.js";
import { InputError } from "./errors.js";

/**
 * What one rank hands to dispatch for one step. Arrays are host copies of the device tensors;
 * T (tokens this step) is `topkIdx.length / topK`. In a DP group every rank passes the same tokens.
 */
export interface RankInput {
  /** Shape [T, hidden]: bf16 bits (Uint16Array) or fp8-e4m3 bits (Uint8Array), per `inputDtype`. */
  x: Uint16Array | Uint8Array;
  /** Shape [T, hidden / 128], fp32 block scales; required for fp8 input, absent for bf16. */
  scales?: Float32Array;
  /** Shape [T, topK], global expert ids; -1 marks an unused slot. */
  topkIdx: Int32Array;
  /** Shape [T, topK], the router's weights. */
  topkWeights: Float32Array;
}

/**
 * What `Session.dispatchSend` takes: a `RankInput` whose `topkWeights` is required with
 * `combineWeights` `expert` (the default) and must be left out with `home`, where the weights go
 * to `combineRecv` instead.
 */
export type DispatchInput = Omit<RankInput, "topkWeights"> & { topkWeights?: Float32Array };

/**
 * What dispatch delivers to one rank: a row table shared by both layouts.
 * Expert e's rows are expertOffsets[e] + i, i < expertCounts[e], ordered by (srcRank, srcToken).
 * - masked: rows = L * R * M; expertOffsets[e] = e*R*M, the rows packed at the front of the block
 *   (the shape masked grouped GEMMs take).
 * - contiguous: blocks one after another, each padded to a multiple of expertAlignment rows
 *   (padding rows have meta srcRank -1; their x and scales are unspecified).
 * Rows outside those ranges hold no meaning.
 */
export interface DispatchResult {
  /** Shape [rows, hidden], dispatch dtype bits. */
  x: Uint16Array | Uint8Array;
  /** Shape [rows, hidden / 128] fp32 scales (fp8 dispatch), else null. */
  scales: Float32Array | null;
  /** Shape [rows, 4]: (srcRank, srcToken, topkSlot, localExpert). */
  meta: Int32Array;
  /** Shape [L]: first row of each local expert's block. */
  expertOffsets: Int32Array;
  /** Shape [L]: rows delivered to each local expert. */
  expertCounts: Int32Array;
  /** Shape [L, R]: rows each source rank delivered to each local expert. */
  sourceCounts: Int32Array;
}

/** Tokens of a rank input (validated). */
export function tokensOf(config: EpConfig, input: Pick<RankInput, "topkIdx">): number {
  return input.topkIdx.length / config.topK;
}

function expectArray(rank: number, name: string, value: unknown, ctor: { name: string }, what: string): void {
  if (!(value instanceof (ctor as unknown as new () => unknown))) {
    const got = value === undefined || value === null ? String(value) : (value as object).constructor?.name;
    throw new InputError(rank, name, `expected ${ctor.name} (${what}), got ${got}`);
  }
}

/**
 * Refuses a bad rank input with an `InputError` naming the tensor and the position. Nothing is
 * modified. Checks types, lengths, T <= maxTokensPerRank, expert ids in [-1, experts) and no
 * expert repeated within a token, finite weights, fp8 scales present exactly when needed (and
 * powers of two that have a UE8M0 byte when the config's scaleFormat is ue8m0). Weights are
 * required with `combineWeights` `expert` and refused with `home` (they belong to combineRecv).
 */
export function validateRankInput(config: EpConfig, rank: number, input: DispatchInput): number {
  validateRank(config, rank);
  if (input === null || typeof input !== "object")
    throw new InputError(rank, "input", "expected an object { x, topkIdx, topkWeights }");
  const K = config.topK;
  const H = config.hidden;
  expectArray(rank, "topkIdx", input.topkIdx, Int32Array, "int32 expert ids [T, topK]");
  const home = combineWeightsOf(config) === "home";
  if (home && input.topkWeights !== undefined) {
    throw new InputError(
      rank,
      "topkWeights",
      'given to dispatch, but combineWeights is "home": the weights are applied at the home rank and passed to combineRecv, so dispatch would not use them; leave topkWeights out of the dispatch input, or set combineWeights to "expert"',
    );
  }
  if (!home) expectArray(rank, "topkWeights", input.topkWeights, Float32Array, "fp32 weights [T, topK]");
  if (input.topkIdx.length % K !== 0) {
    throw new InputError(rank, "topkIdx", `length ${input.topkIdx.length} is not a multiple of topK ${K}`);
  }
  const T = input.topkIdx.length / K;
  if (T > config.maxTokensPerRank) {
    throw new InputError(
      rank,
      "tokens",
      `${T} tokens exceed maxTokensPerRank ${config.maxTokensPerRank}; split the batch or raise the limit`,
    );
  }
  if (input.topkWeights !== undefined && input.topkWeights.length !== T * K) {
    throw new InputError(
      rank,
      "topkWeights",
      `length ${input.topkWeights.length}, expected T*topK = ${T * K}`,
    );
  }
  if (config.inputDtype === "bf16") expectArray(rank, "x", input.x, Uint16Array, "bf16 bits [T, hidden]");
  else expectArray(rank, "x", input.x, Uint8Array, "fp8-e4m3 bits [T, hidden]");
  if (input.x.length !== T * H) {
    throw new InputError(rank, "x", `length ${input.x.length}, expected T*hidden = ${T}*${H} = ${T * H}`);
  }
  const S = scalesPerRow(config, config.inputDtype);
  if (S > 0) {
    if (input.scales === undefined)
      throw new InputError(rank, "scales", "fp8 input needs fp32 block scales [T, hidden/128]");
    expectArray(rank, "scales", input.scales, Float32Array, "fp32 block scales [T, hidden/128]");
    if (input.scales.length !== T * S)
      throw new InputError(rank, "scales", `length ${input.scales.length}, expected ${T * S}`);
    if (scaleFormatOf(config) === "ue8m0") checkUe8m0Scales(rank, input.scales, S);
  } else if (input.scales !== undefined) {
    throw new InputError(
      rank,
      "scales",
      "given, but inputDtype is bf16; drop them or set inputDtype fp8-e4m3",
    );
  }
  for (let t = 0; t < T; t++) {
    for (let k = 0; k < K; k++) {
      const e = input.topkIdx[t * K + k];
      if (e < -1 || e >= config.experts) {
        throw new InputError(rank, "topkIdx", `[${t}][${k}] = ${e} is outside [-1, ${config.experts})`);
      }
      if (e >= 0) {
        for (let j = 0; j < k; j++) {
          if (input.topkIdx[t * K + j] === e)
            throw new InputError(rank, "topkIdx", `[${t}] names expert ${e} twice (slots ${j} and ${k})`);
        }
      }
      const w = input.topkWeights?.[t * K + k] ?? 0;
      if (!Number.isFinite(w)) throw new InputError(rank, "topkWeights", `[${t}][${k}] = ${w} is not finite`);
    }
  }
  return T;
}

function checkFiniteWeights(rank: number, weights: Float32Array, K: number): void {
  for (let i = 0; i < weights.length; i++) {
    if (!Number.isFinite(weights[i]))
      throw new InputError(
        rank,
        "topkWeights",
        `[${Math.floor(i / K)}][${i % K}] = ${weights[i]} is not finite`,
      );
  }
}

/**
 * Refuses the weights a rank passes to `combineRecv` unless they fit its config: with
 * `combineWeights` `home`, fp32 [T, topK] (T the tokens of the rank's dispatch this step), all
 * finite; with `expert`, none (the weights came with dispatch). An `InputError` names the rank
 * and what to do. Returns the weights (undefined with `expert`).
 */
export function validateCombineWeights(
  config: EpConfig,
  rank: number,
  tokens: number,
  weights: unknown,
): Float32Array | undefined {
  const K = config.topK;
  if (combineWeightsOf(config) === "expert") {
    if (weights === undefined) return undefined;
    throw new InputError(
      rank,
      "topkWeights",
      'given to combineRecv, but combineWeights is "expert": the weights travelled with dispatch and the expert ranks applied them; drop them here, or set combineWeights to "home" to weight at the home rank',
    );
  }
  if (weights === undefined)
    throw new InputError(
      rank,
      "topkWeights",
      `missing at combineRecv: combineWeights is "home", so combineRecv takes the router weights fp32 [T, topK] = [${tokens}, ${K}] of this rank's tokens`,
    );
  expectArray(rank, "topkWeights", weights, Float32Array, "fp32 router weights [T, topK] at combineRecv");
  const w = weights as Float32Array;
  if (w.length !== tokens * K)
    throw new InputError(
      rank,
      "topkWeights",
      `length ${w.length} at combineRecv, expected T*topK = ${tokens}*${K} = ${tokens * K} (T: the tokens this rank dispatched this step)`,
    );
  checkFiniteWeights(rank, w, K);
  return w;
}

/** Refuses a rank number outside the world (a wrong world size). */
export function validateRank(config: EpConfig, rank: number): void {
  if (!Number.isInteger(rank) || rank < 0 || rank >= config.ranks) {
    throw new InputError(
      rank,
      "rank",
      `must be an integer in [0, ${config.ranks}) for a world of ${config.ranks} ranks`,
    );
  }
}

/** Refuses expert outputs that do not match the dispatch rows. */
export function validateExpertOut(rank: number, rows: number, hidden: number, out: unknown): Uint16Array {
  expectArray(rank, "expertOut", out, Uint16Array, "bf16 bits [rows, hidden] aligned with the dispatch rows");
  const o = out as Uint16Array;
  if (o.length !== rows * hidden) {
    throw new InputError(
      rank,
      "expertOut",
      `length ${o.length}, expected rows*hidden = ${rows}*${hidden} = ${rows * hidden}`,
    );
  }
  return o;
}

/** ue8m0 fp8 input: every scale must be 2^k, k in [-127, 127], so that it has a UE8M0 byte. */
function checkUe8m0Scales(rank: number, scales: Float32Array, S: number): void {
  for (let i = 0; i < scales.length; i++) {
    if (ue8m0Byte(scales[i]) < 0)
      throw new InputError(
        rank,
        "scales",
        `[${Math.floor(i / S)}][${i % S}] = ${scales[i]} is not 2^k for an integer k in [-127, 127], as the ue8m0 scale format needs; pass power-of-two scales or set scaleFormat to "pow2" or "amax"`,
      );
  }
}
