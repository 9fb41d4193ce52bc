import {
  type Backend,
  bf16ToNumber,
  type Capabilities,
  type DispatchInput,
  type DispatchResult,
  deliveredRows,
  type EpConfig,
  numberToBf16,
  validateRankInput,
} from "@switchyard/core";
import { brokenBackend, EXPERT_WEIGHTS_ONLY, ForwardingSession } from "./wrap.js";

/** Sums one token's used slots: terms are w_k * o_k as (w, o) pairs in slot order; returns the value to round to bf16. */
export type Accumulate = (terms: { w: number; o: number }[]) => number;

/**
 * Combines one token's row: `idx` and `w` its [topK] slots, `out(k)` the expert output row of used
 * slot k, `config` the world's; returns y's row (bf16 bits [hidden]).
 */
export type CombineRow = (
  hidden: number,
  idx: Int32Array,
  w: Float32Array,
  out: (k: number) => Uint16Array,
  config: EpConfig,
) => Uint16Array;

/**
 * A backend that moves data like the reference but computes combine itself with `accumulate`,
 * from the expert outputs it was handed, to test which accumulation orders and precisions the
 * combine bound admits.
 */
export function recombiningBackend(name: string, accumulate: Accumulate): Backend {
  return recombiningRows(name, (H, idx, w, out) => {
    const slots: { w: number; o: Uint16Array }[] = [];
    for (let k = 0; k < idx.length; k++) if (idx[k] >= 0) slots.push({ w: w[k], o: out(k) });
    const y = new Uint16Array(H);
    for (let h = 0; h < H; h++)
      y[h] = numberToBf16(accumulate(slots.map((s) => ({ w: s.w, o: bf16ToNumber(s.o[h]) }))));
    return y;
  });
}

/**
 * A backend that moves data like the reference but combines each token's row itself with `row`,
 * from the weights given to dispatch, or with `combineWeights: "home"` those given to combineRecv.
 */
export function recombiningRows(
  name: string,
  row: CombineRow,
  capabilities: Capabilities = EXPERT_WEIGHTS_ONLY,
): Backend {
  return brokenBackend(
    name,
    (inner) =>
      new (class extends ForwardingSession {
        private readonly inputs = new Map<number, DispatchInput>();
        private readonly results = new Map<number, DispatchResult>();
        /** group:token:slot -> expert output row. */
        private readonly outputs = new Map<string, Uint16Array>();

        override async dispatchSend(rank: number, input: DispatchInput): Promise<void> {
          await this.inner.dispatchSend(rank, input);
          validateRankInput(this.config, rank, input);
          this.inputs.set(rank, {
            ...input,
            topkIdx: input.topkIdx.slice(),
            topkWeights: input.topkWeights?.slice(),
          });
        }

        override async dispatchRecv(rank: number): Promise<DispatchResult> {
          const r = await this.inner.dispatchRecv(rank);
          this.results.set(rank, r);
          return r;
        }

        override async combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
          await this.inner.combineSend(rank, expertOut);
          const r = this.results.get(rank)!;
          const H = this.config.hidden;
          for (const { row } of deliveredRows(this.config, r)) {
            const [src, token, slot] = r.meta.subarray(row * 4, row * 4 + 3);
            const group = Math.floor(src / this.config.dpSize);
            this.outputs.set(`${group}:${token}:${slot}`, expertOut.slice(row * H, (row + 1) * H));
          }
        }

        override async combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array> {
          const y = (await this.inner.combineRecv(rank, topkWeights)).slice();
          const { topK: K, hidden: H, dpSize } = this.config;
          const input = this.inputs.get(rank)!;
          const group = Math.floor(rank / dpSize);
          for (let t = 0; t < y.length / H; t++) {
            const out = (k: number) => this.outputs.get(`${group}:${t}:${k}`)!;
            const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
            const w = (topkWeights ?? input.topkWeights)!.subarray(t * K, (t + 1) * K);
            y.set(row(H, idx, w, out, this.config), t * H);
          }
          return y;
        }
      })(inner),
    capabilities,
  );
}

const f = Math.fround;
const bf = (v: number) => bf16ToNumber(numberToBf16(v));

/** fp32, slots in reverse order: as accurate as the reference, another order. Must pass. */
export const reverseOrder = recombiningBackend("fp32-reverse-order", (terms) =>
  terms.reduceRight((acc, { w, o }) => f(acc + f(w * o)), 0),
);

/** fp32 pairwise (tree) sum, as a parallel reduction does. Must pass. */
export const pairwise = recombiningBackend("fp32-pairwise", (terms) => {
  let level = terms.map(({ w, o }) => f(w * o));
  while (level.length > 1) {
    const next: number[] = [];
    for (let i = 0; i < level.length; i += 2)
      next.push(i + 1 < level.length ? f(level[i] + level[i + 1]) : level[i]);
    level = next;
  }
  return level[0] ?? 0;
});

/** fp32 with fused multiply-add (one rounding per slot). Must pass. */
export const fused = recombiningBackend("fp32-fma", (terms) =>
  terms.reduce((acc, { w, o }) => f(acc + w * o), 0),
);

/** Exact (float64) sum, rounded once. Must pass. */
export const wide = recombiningBackend("float64-accumulate", (terms) =>
  terms.reduce((acc, { w, o }) => acc + w * o, 0),
);

/** bf16 accumulator: products and partial sums rounded to bf16. Must fail combine/accuracy. */
export const bf16Accumulate = recombiningBackend("bf16-accumulate", (terms) =>
  terms.reduce((acc, { w, o }) => bf(acc + bf(w * o)), 0),
);
