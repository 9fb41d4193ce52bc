import { scalesPerRow } from "../../config.js";
import { dispatchPayload } from "../../reference/dispatch.js";
import { ownerOf } from "../../rows.js";
import { encodeSignal } from "../../signal.js";
import { type RankInput, tokensOf } from "../../tensors.js";
import type { StepContext } from "./context.js";

/**
 * Dispatch send for source rank `src`: for each destination rank and local expert, the tokens
 * this rank owns that name the expert, in token order. Data first (row, scales, meta), then the
 * signal word. masked: rows go to dispatchX[e][src][i] and the signal to dispatchSignal[e][src].
 * contiguous: rows go to the staging dispatchX[src][j] ordered by (expert, token), the per-expert
 * counts to countSignal[src][e], and one signal to dispatchSignal[src] after all of them.
 * Returns the rows written to each destination rank.
 */
export function dispatchSend(ctx: StepContext, src: number, input: RankInput): Int32Array {
  const { config, layout, heaps, epoch } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const S = scalesPerRow(config, config.dispatchDtype);
  const T = tokensOf(config, input);
  const payload = dispatchPayload(config, input);
  const sent = new Int32Array(R);
  for (let dst = 0; dst < R; dst++) {
    const heap = heaps[dst];
    const x = heap.elems("dispatchX");
    const scales = S ? heap.f32("dispatchScales") : null;
    const meta = heap.i32("dispatchMeta");
    let staged = 0;
    for (let e = 0; e < L; e++) {
      const expert = dst * L + e;
      let count = 0;
      for (let t = 0; t < T; t++) {
        if (ownerOf(config, src, t) !== src) continue;
        const k = input.topkIdx.subarray(t * K, (t + 1) * K).indexOf(expert);
        if (k < 0) continue;
        const row =
          config.layout === "masked" ? (e * R + src) * M + count : src * layout.rowsPerSource + staged;
        x.set(payload.x.subarray(t * H, (t + 1) * H), row * H);
        if (scales && payload.scales) scales.set(payload.scales.subarray(t * S, (t + 1) * S), row * S);
        meta.set([src, t, k, e], row * 4);
        count++;
        staged++;
      }
      if (config.layout === "masked") heap.u32("dispatchSignal")[e * R + src] = encodeSignal(epoch, count);
      else heap.u32("countSignal")[src * L + e] = encodeSignal(epoch, count);
    }
    if (config.layout === "contiguous") heap.u32("dispatchSignal")[src] = encodeSignal(epoch, staged);
    sent[dst] = staged;
  }
  return sent;
}
