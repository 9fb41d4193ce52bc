import {
  bf16ToNumber,
  type DispatchResult,
  deliveredRows,
  encodeFp8,
  FP8_BLOCK,
  FP8_MAX,
  type RankInput,
  scaleExponent,
} from "@switchyard/core";
import { brokenBackend, copyResult, ForwardingSession, valid } from "./wrap.js";

/**
 * Quantises with a strict block-scale rule, amax < 448 * 2^s instead of <=: a block whose largest
 * magnitude is exactly 448 * 2^s gets scale 2^(s+1) (its codes halved). Every other block is right,
 * so only payloads on the rule's boundary show it.
 */
export const strictBlockScale = brokenBackend(
  "strict-block-scale",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly sent = new Map<number, Uint16Array>();

      override dispatchSend(rank: number, input: RankInput): Promise<void> {
        if (valid(this, rank, input) && input.x instanceof Uint16Array) this.sent.set(rank, input.x.slice());
        return this.inner.dispatchSend(rank, input);
      }

      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = await this.inner.dispatchRecv(rank);
        const { hidden: H, inputDtype, dispatchDtype } = this.config;
        if (inputDtype !== "bf16" || dispatchDtype !== "fp8-e4m3") return r;
        const out = copyResult(r);
        const S = H / FP8_BLOCK;
        for (const { row } of deliveredRows(this.config, r)) {
          const x = this.sent.get(r.meta[row * 4]);
          if (!x) continue;
          const src = r.meta[row * 4 + 1] * H;
          for (let b = 0; b < S; b++) {
            let amax = 0;
            for (let i = 0; i < FP8_BLOCK; i++) {
              const a = Math.abs(bf16ToNumber(x[src + b * FP8_BLOCK + i]));
              if (Number.isFinite(a) && a > amax) amax = a;
            }
            const s = scaleExponent(amax);
            if (amax === 0 || amax !== FP8_MAX * 2 ** s) continue;
            out.scales![row * S + b] = 2 ** (s + 1);
            for (let i = 0; i < FP8_BLOCK; i++) {
              const bits = x[src + b * FP8_BLOCK + i];
              const nanSign = (bits & 0x7fff) > 0x7f80 ? (bits >>> 8) & 0x80 : 0;
              out.x[row * H + b * FP8_BLOCK + i] = encodeFp8(bf16ToNumber(bits) / 2 ** (s + 1)) | nanSign;
            }
          }
        }
        return out;
      }
    })(inner),
);
