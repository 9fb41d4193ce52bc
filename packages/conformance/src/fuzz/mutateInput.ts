import type { EpConfig, RankInput } from "@switchyard/core";
import { freshInput } from "../generators/badInput.js";
import type { Rng } from "../harness/rng.js";
import { ARRAY_CLASSES, oddValue } from "./values.js";

type Tensor = "x" | "scales" | "topkIdx" | "topkWeights";
const TENSORS: readonly Tensor[] = ["x", "scales", "topkIdx", "topkWeights"];

/** A deep copy of an input, so mutations never reach the original. */
export function copyInput(i: RankInput): RankInput {
  return {
    x: i.x.slice(),
    ...(i.scales ? { scales: i.scales.slice() } : {}),
    topkIdx: i.topkIdx.slice(),
    topkWeights: i.topkWeights.slice(),
  };
}

/** `a`'s values in a new array of class `C` and length `n` (cut or zero-extended). */
function recast(a: ArrayLike<number>, C: new (n: number) => ArrayLike<number>, n: number): ArrayLike<number> {
  const out = new C(n) as unknown as number[];
  for (let i = 0; i < Math.min(n, a.length); i++) out[i] = a[i];
  if (C === Array) for (let i = a.length; i < n; i++) out[i] = 0;
  return out;
}

/** The same values as a view at an offset into a larger buffer, or in shared memory (both valid). */
function rehouse(a: Uint8Array | Uint16Array | Int32Array | Float32Array, rng: Rng): ArrayBufferView {
  const C = a.constructor as new (b: ArrayBufferLike, o: number, n: number) => typeof a;
  const size = a.BYTES_PER_ELEMENT;
  const shared = rng.chance(0.3) && typeof SharedArrayBuffer !== "undefined";
  const lead = shared ? 0 : rng.int(1, 3);
  const buffer = shared
    ? new SharedArrayBuffer((a.length + 1) * size)
    : new ArrayBuffer((a.length + lead + 2) * size);
  const view = new C(buffer, lead * size, a.length);
  (view as unknown as { set(x: ArrayLike<number>): void }).set(a);
  return view;
}

type Mutation = (c: EpConfig, i: RankInput, rng: Rng) => { input: unknown; edit: string };

const MUTATIONS: readonly Mutation[] = [
  (_c, i, rng) => {
    const t = rng.pick(TENSORS);
    const src = (ArrayBuffer.isView(i[t]) ? i[t] : new Float32Array(0)) as ArrayLike<number>;
    const C = rng.pick(ARRAY_CLASSES);
    return { input: { ...i, [t]: recast(src, C, src.length) }, edit: `${t} as ${C.name}` };
  },
  (c, i, rng) => {
    const t = rng.pick(TENSORS);
    const src = i[t];
    if (!ArrayBuffer.isView(src))
      return { input: { ...i, scales: new Float32Array(rng.int(0, 4)) }, edit: "scales added" };
    const n = Math.max(0, src.length + rng.pick([-1, 1, -c.hidden, c.topK, 7]));
    return { input: { ...i, [t]: recast(src, src.constructor as never, n) }, edit: `${t} length ${n}` };
  },
  (c, i, rng) => {
    if (i.topkIdx.length === 0) return { input: i, edit: "no slot to change" };
    const at = rng.int(0, i.topkIdx.length - 1);
    const v = rng.pick([
      -1,
      -2,
      c.experts,
      c.experts + 1,
      rng.int(0, c.experts - 1),
      2 ** 31 - 1,
      -(2 ** 31),
    ]);
    i.topkIdx[at] = v;
    return { input: i, edit: `topkIdx[${at}] = ${v}` };
  },
  (c, i, rng) => {
    const K = c.topK;
    if (K < 2 || i.topkIdx.length === 0) return { input: i, edit: "no token to repeat in" };
    const t = rng.int(0, i.topkIdx.length / K - 1);
    const [a, b] = rng.permutation(K);
    i.topkIdx[t * K + b] = i.topkIdx[t * K + a];
    return { input: i, edit: `token ${t} slots ${a}, ${b} equal` };
  },
  (_c, i, rng) => {
    if (i.topkWeights.length === 0) return { input: i, edit: "no weight to change" };
    const at = rng.int(0, i.topkWeights.length - 1);
    const v = rng.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0, 1e-40]);
    i.topkWeights[at] = v;
    return { input: i, edit: `topkWeights[${at}] = ${v}` };
  },
  (c, _i, rng) => {
    const T = c.maxTokensPerRank + rng.int(1, 3);
    return { input: freshInput(c, T, rng), edit: `${T} tokens` };
  },
  (_c, i, rng) => {
    const { scales: _, ...rest } = i;
    const edit = rng.pick(["scales dropped", "scales null", "scales added"]);
    if (edit === "scales dropped") return { input: rest, edit };
    if (edit === "scales null") return { input: { ...rest, scales: null }, edit };
    return { input: { ...rest, scales: new Float32Array(Math.max(1, Math.floor(i.x.length / 128))) }, edit };
  },
  (_c, i, rng) => {
    const edit = rng.pick([
      "null",
      "undefined",
      "a number",
      "a string",
      "an array",
      "no topkIdx",
      "odd field",
    ]);
    const input: Record<string, unknown> = {
      null: null,
      undefined: undefined,
      "a number": 42,
      "a string": "tokens",
      "an array": [i.x, i.topkIdx],
      "no topkIdx": { x: i.x, topkWeights: i.topkWeights },
    } as Record<string, unknown>;
    if (edit === "odd field") return { input: { ...i, [rng.pick(TENSORS)]: oddValue(rng) }, edit };
    return { input: input[edit], edit: `input ${edit}` };
  },
  (_c, i, rng) => {
    const t = rng.pick(TENSORS.filter((n) => ArrayBuffer.isView(i[n])));
    return { input: { ...i, [t]: rehouse(i[t]!, rng) }, edit: `${t} rehoused` };
  },
  (_c, i) => ({ input: { ...i, extra: 1 }, edit: "an extra field" }),
];

/**
 * A rank input derived from a valid one by 1-2 random edits (wrong classes, lengths, ids, repeated
 * ids, non-finite weights, too many tokens, scales where they do not belong, not an object, the
 * same values in another buffer). `valid` is never modified. Some edits leave it valid; the oracle
 * decides.
 */
export function mutateInput(
  config: EpConfig,
  valid: RankInput,
  rng: Rng,
): { input: unknown; edits: string[] } {
  let input: unknown = copyInput(valid);
  const edits: string[] = [];
  for (let n = rng.int(1, 2); n > 0; n--) {
    const usable =
      input !== null &&
      typeof input === "object" &&
      ["x", "topkIdx", "topkWeights"].every((k) => ArrayBuffer.isView((input as Record<string, unknown>)[k]));
    if (!usable) break;
    const m = rng.pick(MUTATIONS)(config, input as RankInput, rng);
    input = m.input;
    edits.push(m.edit);
  }
  return { input, edits };
}
