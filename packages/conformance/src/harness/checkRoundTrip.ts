import {
  bf16ToNumber,
  blockPlacement,
  dequantizeRowsToBf16,
  dispatchPayload,
  type EpConfig,
  FP8_BLOCK,
  type RankInput,
} from "@switchyard/core";
import { fp8Delta, roundTripBound } from "../bounds.js";
import { checkCombineShape } from "./checkCombine.js";
import type { Problems } from "./problems.js";

/**
 * Checks a round trip through identity experts: y[t] = (sum of t's used weights) * x[t] within
 * `roundTripBound` (bounds.ts). x is the token's row as bf16; for fp8 input, the input
 * dequantised to bf16 (what the identity experts return).
 */
export function checkRoundTrip(
  config: EpConfig,
  inputs: RankInput[],
  ys: Uint16Array[],
  problems: Problems,
): void {
  const K = config.topK;
  const H = config.hidden;
  const S = H / FP8_BLOCK;
  const quantised = config.inputDtype === "bf16" && config.dispatchDtype === "fp8-e4m3";
  const placement = blockPlacement(config);
  inputs.forEach((input, rank) => {
    const y = ys[rank];
    if (!checkCombineShape(config, rank, input, y, problems)) return;
    const T = input.topkIdx.length / K;
    const x =
      config.inputDtype === "fp8-e4m3"
        ? dequantizeRowsToBf16(input.x as Uint8Array, input.scales!, H)
        : (input.x as Uint16Array);
    const scales = quantised ? dispatchPayload(config, input).scales : null;
    for (let t = 0; t < T; t++) {
      let W = 0;
      let absW = 0;
      let used = 0;
      const ranks = new Set<number>();
      for (let k = 0; k < K; k++) {
        if (input.topkIdx[t * K + k] < 0) continue;
        ranks.add(placement.rankOf(input.topkIdx[t * K + k]));
        const w = input.topkWeights[t * K + k];
        W += w;
        absW += Math.abs(w);
        used++;
      }
      for (let h = 0; h < H; h++) {
        const xv = bf16ToNumber(x[t * H + h]);
        const scale = scales === null ? null : scales[t * S + Math.floor(h / FP8_BLOCK)];
        const bound = roundTripBound(xv, W, absW, used, ranks.size, fp8Delta(xv, scale));
        const got = bf16ToNumber(y[t * H + h]);
        if (!(Math.abs(got - W * xv) <= bound)) {
          problems.add(
            `rank ${rank} token ${t} element ${h}: y = ${got}, expected (sum of weights ${W}) * x ${xv} = ${W * xv} ` +
              `(|error| ${Math.abs(got - W * xv).toExponential(3)} > bound ${bound.toExponential(3)})`,
          );
          break;
        }
      }
    }
  });
}
