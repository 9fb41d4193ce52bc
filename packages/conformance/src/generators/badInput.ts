import { type EpConfig, type RankInput, scalesPerRow } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";
import { fillBf16, fillFp8, fillScales } from "./payload.js";
import { routeTokens } from "./routing.js";
import { DTYPE_PAIRS, type SpaceWants } from "./space.js";

/** One bad call: what is passed, at which stage of the step, and what it is (for messages). */
export interface BadCall {
  readonly stage: "dispatchSend" | "dispatchRecv" | "combineSend";
  /** The rank argument (outside the world for `input/rank`). */
  readonly rank: number;
  /** dispatchSend's input. */
  readonly input?: unknown;
  /** combineSend's expert output. */
  readonly expertOut?: unknown;
  readonly description: string;
}

/** A kind of bad input: every instance must be refused with `InputError` before anything moves. */
export interface BadInputKind {
  readonly name: string;
  readonly summary: string;
  readonly required: boolean;
  readonly wants?: SpaceWants;
  /** Whether the kind can be built for this config (else the case is filtered). */
  applies(config: EpConfig): boolean;
  /** Builds a bad call for `victim` (whose valid input is `valid`); `rows` is the layout's row count. */
  make(config: EpConfig, victim: number, valid: RankInput, rng: Rng, rows: number): BadCall;
}

/** A valid input with T tokens, every slot used, normal payload: the base that one mutation breaks. */
export function freshInput(config: EpConfig, T: number, rng: Rng): RankInput {
  const H = config.hidden;
  const route = routeTokens(
    config.experts,
    config.topK,
    T,
    { style: "uniform", unused: 0, emptyToken: false, seed: 0 },
    rng,
  );
  if (config.inputDtype === "bf16") return { x: fillBf16(T * H, "normal", rng), ...route };
  return {
    x: fillFp8(T * H, "normal", rng),
    scales: fillScales(T * scalesPerRow(config, "fp8-e4m3"), "normal", rng),
    ...route,
  };
}

function base(config: EpConfig, rng: Rng): { input: RankInput; T: number } {
  const T = rng.int(1, config.maxTokensPerRank);
  return { input: freshInput(config, T, rng), T };
}

const send = (victim: number, input: unknown, description: string): BadCall => ({
  stage: "dispatchSend",
  rank: victim,
  input,
  description,
});

const always = () => true;

export const BAD_INPUT_KINDS: readonly BadInputKind[] = [
  {
    name: "dtype",
    summary: "x, topkIdx, topkWeights or scales of the wrong typed-array type (or a plain array)",
    required: true,
    applies: always,
    make(config, victim, _valid, rng) {
      const { input } = base(config, rng);
      const n = input.x.length;
      const fp8 = config.inputDtype === "fp8-e4m3";
      const variants: [string, () => unknown][] = [
        ["x as Float32Array", () => new Float32Array(n)],
        [fp8 ? "x as Uint16Array" : "x as Uint8Array", () => (fp8 ? new Uint16Array(n) : new Uint8Array(n))],
        [fp8 ? "x as Int8Array" : "x as Int16Array", () => (fp8 ? new Int8Array(n) : new Int16Array(n))],
        ["topkIdx as Uint32Array", () => Uint32Array.from(input.topkIdx)],
        ["topkIdx as Float32Array", () => Float32Array.from(input.topkIdx)],
        ["topkIdx as a plain array", () => Array.from(input.topkIdx)],
        ["topkWeights as Float64Array", () => Float64Array.from(input.topkWeights)],
        ["topkWeights as a plain array", () => Array.from(input.topkWeights)],
      ];
      if (fp8) variants.push(["scales as Float64Array", () => Float64Array.from(input.scales!)]);
      const [description, make] = rng.pick(variants);
      const field = description.split(" ")[0];
      return send(victim, { ...input, [field]: make() }, description);
    },
  },
  {
    name: "shape",
    summary: "lengths that do not match: x, topkWeights, topkIdx (not a multiple of topK) or scales",
    required: true,
    applies: always,
    make(config, victim, _valid, rng) {
      const { input, T } = base(config, rng);
      const H = config.hidden;
      const K = config.topK;
      const variants: [string, () => RankInput][] = [
        ["x one element short", () => ({ ...input, x: input.x.slice(0, T * H - 1) })],
        ["x one row short", () => ({ ...input, x: input.x.slice(0, (T - 1) * H) })],
        [
          "x one element long",
          () => {
            const x = new (input.x.constructor as new (n: number) => Uint16Array | Uint8Array)(T * H + 1);
            x.set(input.x);
            return { ...input, x };
          },
        ],
        ["topkWeights one short", () => ({ ...input, topkWeights: input.topkWeights.slice(0, T * K - 1) })],
        [
          K > 1 ? "topkIdx not a multiple of topK" : "topkIdx one row longer than topkWeights and x",
          () => {
            const idx = new Int32Array(T * K + 1).fill(-1);
            idx.set(input.topkIdx);
            return { ...input, topkIdx: idx };
          },
        ],
      ];
      if (input.scales) {
        variants.push(["scales one short", () => ({ ...input, scales: input.scales!.slice(0, -1) })]);
      }
      const [description, make] = rng.pick(variants);
      return send(victim, make(), description);
    },
  },
  {
    name: "expert-range",
    summary: "a topkIdx entry outside [-1, experts)",
    required: true,
    applies: always,
    make(config, victim, _valid, rng) {
      const { input } = base(config, rng);
      const i = rng.int(0, input.topkIdx.length - 1);
      const bad = rng.pick([config.experts, config.experts + 7, -2, -(2 ** 31), 2 ** 31 - 1]);
      input.topkIdx[i] = bad;
      return send(victim, input, `topkIdx[${i}] = ${bad} with ${config.experts} experts`);
    },
  },
  {
    name: "repeated-expert",
    summary: "one expert named twice within a token",
    required: true,
    applies: (config) => config.topK >= 2,
    make(config, victim, _valid, rng) {
      const { input, T } = base(config, rng);
      const K = config.topK;
      const t = rng.int(0, T - 1);
      const [i, j] = rng.permutation(K);
      input.topkIdx[t * K + j] = input.topkIdx[t * K + i];
      return send(
        victim,
        input,
        `token ${t} names expert ${input.topkIdx[t * K + i]} in slots ${i} and ${j}`,
      );
    },
  },
  {
    name: "too-many-tokens",
    summary: "more tokens than maxTokensPerRank",
    required: true,
    applies: always,
    make(config, victim, _valid, rng) {
      const T = config.maxTokensPerRank + rng.pick([1, 1, 2, 5]);
      return send(
        victim,
        freshInput(config, T, rng),
        `${T} tokens, maxTokensPerRank ${config.maxTokensPerRank}`,
      );
    },
  },
  {
    name: "rank",
    summary: "a rank outside the world (a wrong world size), at dispatchSend or dispatchRecv",
    required: true,
    applies: always,
    make(config, _victim, valid, rng) {
      const rank = rng.pick([config.ranks, config.ranks + 1, -1, 0.5, Number.NaN]);
      if (rng.chance(0.5))
        return send(rank, valid, `dispatchSend on rank ${rank} of a ${config.ranks}-rank world`);
      return {
        stage: "dispatchRecv",
        rank,
        description: `dispatchRecv on rank ${rank} of a ${config.ranks}-rank world`,
      };
    },
  },
  {
    name: "unexpected-scales",
    summary: "bf16 input that carries scales",
    required: true,
    wants: { dtypes: DTYPE_PAIRS.filter((p) => p.input === "bf16") },
    applies: (config) => config.inputDtype === "bf16",
    make(config, victim, _valid, rng) {
      const { input, T } = base(config, rng);
      const scales = new Float32Array(T * Math.max(1, Math.floor(config.hidden / 128))).fill(1);
      return send(victim, { ...input, scales }, "bf16 input with fp32 scales");
    },
  },
  {
    name: "missing-scales",
    summary: "fp8 input without its fp32 block scales",
    required: false,
    wants: { dtypes: DTYPE_PAIRS.filter((p) => p.input === "fp8-e4m3") },
    applies: (config) => config.inputDtype === "fp8-e4m3",
    make(config, victim, _valid, rng) {
      const { input } = base(config, rng);
      const { scales: _dropped, ...rest } = input;
      if (rng.chance(0.5)) return send(victim, rest, "fp8 input without scales");
      return send(victim, { ...rest, scales: null }, "fp8 input with scales: null");
    },
  },
  {
    name: "non-finite-weight",
    summary: "a NaN or infinite router weight",
    required: true,
    applies: always,
    make(config, victim, _valid, rng) {
      const { input } = base(config, rng);
      const i = rng.int(0, input.topkWeights.length - 1);
      const bad = rng.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
      input.topkWeights[i] = bad;
      return send(victim, input, `topkWeights[${i}] = ${bad}`);
    },
  },
  {
    name: "expert-output",
    summary: "combineSend's expert output of the wrong type or length",
    required: true,
    applies: always,
    make(config, victim, _valid, rng, rows) {
      const n = rows * config.hidden;
      const variants: [string, () => unknown][] = [
        ["one element short", () => new Uint16Array(n - 1)],
        ["one row long", () => new Uint16Array(n + config.hidden)],
        ["as Float32Array", () => new Float32Array(n)],
        ["as Uint8Array", () => new Uint8Array(n * 2)],
        ["as a plain array", () => new Array<number>(n).fill(0)],
      ];
      const [description, make] = rng.pick(variants);
      return {
        stage: "combineSend",
        rank: victim,
        expertOut: make(),
        description: `expert output ${description}`,
      };
    },
  },
];
