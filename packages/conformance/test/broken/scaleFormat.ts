import {
  AMAX_FLOOR,
  bf16ToNumber,
  type DispatchResult,
  deliveredRows,
  encodeFp8,
  FP8_BLOCK,
  FP8_MAX,
  FP8_MAX_INV,
  type RankInput,
  scaleExponent,
} from "@switchyard/core";
import { brokenBackend, copyResult, ForwardingSession, valid } from "./wrap.js";

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
 * Two plausible slips in the scale formats, each only on blocks whose largest magnitude is under
 * 1e-4 (every other block is right):
 * - amax: no floor, so an all-zero block divides by zero (scale 0, NaN codes) and a tiny block
 *   gets a tiny scale;
 * - ue8m0: the exponent taken from max(amax, 1e-4), as DeepEP computes it, not core's pow2 rule.
 */
export const unflooredScales = brokenBackend(
  "scale-format-floor",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly sent = new Map<number, Uint16Array>();

      override dispatchSend(rank: number, input: RankInput): Promise<void> {
        if (valid(this, rank, input) && input.x instanceof Uint16Array) this.sent.set(rank, input.x.slice());
        return this.inner.dispatchSend(rank, input);
      }

      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = await this.inner.dispatchRecv(rank);
        const { hidden: H, inputDtype, scaleFormat } = this.config;
        if (inputDtype !== "bf16" || (scaleFormat !== "amax" && scaleFormat !== "ue8m0")) return r;
        const out = copyResult(r);
        const S = H / FP8_BLOCK;
        for (const { row } of deliveredRows(this.config, r)) {
          const x = this.sent.get(r.meta[row * 4]);
          if (!x) continue;
          for (let b = 0; b < S; b++) {
            const from = r.meta[row * 4 + 1] * H + b * FP8_BLOCK;
            const amax = blockAmax(x, from);
            if (amax >= AMAX_FLOOR) continue;
            const ue8m0 = scaleFormat === "ue8m0";
            const r32 = ue8m0 ? 2 ** -scaleExponent(AMAX_FLOOR) : Math.fround(FP8_MAX / amax);
            out.scales![row * S + b] = ue8m0 ? 1 / r32 : Math.fround(amax * FP8_MAX_INV);
            for (let i = 0; i < FP8_BLOCK; i++) {
              const bits = x[from + i];
              const nanSign = (bits & 0x7fff) > 0x7f80 ? (bits >>> 8) & 0x80 : 0;
              out.x[row * H + b * FP8_BLOCK + i] = encodeFp8(Math.fround(bf16ToNumber(bits) * r32)) | nanSign;
            }
          }
        }
        return out;
      }
    })(inner),
);
