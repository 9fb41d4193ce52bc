import {
  type Backend,
  bf16ToNumber,
  type DispatchResult,
  deliveredRows,
  type EpConfig,
  encodeFp8,
  FP8_BLOCK,
  type RankInput,
} from "@switchyard/core";
import { brokenBackend, copyResult, ForwardingSession, valid } from "./wrap.js";

/** A wrong quantisation of one block: its scale and the factor each input value is multiplied by, or null (left right). */
export type BlockSlip = (amax: number, config: EpConfig) => { scale: number; factor: number } | null;

/** Block amax over finite values of bf16 bits x[from, from + 128). */
function blockAmax(x: Uint16Array, from: number): number {
  let amax = 0;
  for (let i = from; i < from + FP8_BLOCK; i++) {
    const a = Math.abs(bf16ToNumber(x[i]));
    if (Number.isFinite(a) && a > amax) amax = a;
  }
  return amax;
}

/**
 * A backend that re-quantises, from the bf16 input it was sent, every delivered fp8 block where
 * `slip` says so (when `applies` to the config): codes e4m3(fl32(x * factor)), NaN keeping its sign,
 * the slip's scale. Every other block is the inner backend's.
 */
export function requantizingBackend(
  name: string,
  applies: (config: EpConfig) => boolean,
  slip: BlockSlip,
): Backend {
  return brokenBackend(
    name,
    (inner) =>
      new (class extends ForwardingSession {
        private readonly sent = new Map<number, Uint16Array>();

        override dispatchSend(rank: number, input: RankInput): Promise<void> {
          if (valid(this, rank, input) && input.x instanceof Uint16Array)
            this.sent.set(rank, input.x.slice());
          return this.inner.dispatchSend(rank, input);
        }

        override async dispatchRecv(rank: number): Promise<DispatchResult> {
          const r = await this.inner.dispatchRecv(rank);
          const { hidden: H, inputDtype } = this.config;
          if (inputDtype !== "bf16" || !applies(this.config)) return r;
          const out = copyResult(r);
          const S = H / FP8_BLOCK;
          for (const { row } of deliveredRows(this.config, r)) {
            const x = this.sent.get(r.meta[row * 4]);
            if (!x) continue;
            for (let b = 0; b < S; b++) {
              const from = r.meta[row * 4 + 1] * H + b * FP8_BLOCK;
              const wrong = slip(blockAmax(x, from), this.config);
              if (wrong === null) continue;
              out.scales![row * S + b] = wrong.scale;
              for (let i = 0; i < FP8_BLOCK; i++) {
                const bits = x[from + i];
                const nanSign = (bits & 0x7fff) > 0x7f80 ? (bits >>> 8) & 0x80 : 0;
                out.x[row * H + b * FP8_BLOCK + i] =
                  encodeFp8(Math.fround(bf16ToNumber(bits) * wrong.factor)) | nanSign;
              }
            }
          }
          return out;
        }
      })(inner),
  );
}
