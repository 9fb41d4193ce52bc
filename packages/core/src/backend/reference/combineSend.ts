import { encodeSignal } from "../../signal.js";
import type { StepContext } from "./context.js";
import { expertOffsets, receivedCounts } from "./dispatchRecv.js";

/**
 * Combine send on expert rank `rank`: each delivered row's expert output goes back to
 * combineX[srcToken][slot] on every rank of the source's DP group; then one signal per home rank
 * (combineSignal[rank], count = rows written to that rank). Which rows are delivered is read again
 * from this step's signals and the row metadata, as a kernel would. Returns the rows written to
 * each home rank.
 */
export function combineSend(ctx: StepContext, rank: number, expertOut: Uint16Array): Int32Array {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const K = config.topK;
  const dp = config.dpSize;
  const counts = receivedCounts(ctx, rank);
  const offsets = expertOffsets(ctx, counts);
  const meta = heaps[rank].i32(config.layout === "masked" ? "dispatchMeta" : "recvMeta");
  const sent = new Int32Array(R);
  for (let e = 0; e < L; e++) {
    let row = offsets[e];
    for (let s = 0; s < R; s++) {
      if (config.layout === "masked") row = (e * R + s) * M;
      for (let i = 0; i < counts[e * R + s]; i++, row++) {
        const [src, token, slot] = meta.subarray(row * 4, row * 4 + 3);
        const group = Math.floor(src / dp) * dp;
        for (let home = group; home < group + dp; home++) {
          heaps[home]
            .elems("combineX")
            .set(expertOut.subarray(row * H, (row + 1) * H), (token * K + slot) * H);
          sent[home]++;
        }
      }
    }
  }
  for (let home = 0; home < R; home++)
    heaps[home].u32("combineSignal")[rank] = encodeSignal(epoch, sent[home]);
  return sent;
}
