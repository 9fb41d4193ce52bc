import { partialOf } from "../../reference/combine.js";
import { encodeSignal } from "../../signal.js";
import type { StepContext } from "./context.js";
import { readReceived } from "./received.js";

const STAGE = "combine send";

/**
 * Combine send on expert rank `rank` (docs/protocol.md): for every route record of this step,
 * the partial of its entries (fp32, slot order, rounded to bf16) goes to combineX[rank][srcToken]
 * on every rank of the source's DP group; then one signal per home rank (combineSignal[rank],
 * count = partials written to it). Which records arrived is read again from this step's signals,
 * as a kernel would. Returns the partials written to each home rank.
 */
export function combineSend(ctx: StepContext, rank: number, expertOut: Uint16Array): Int32Array {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const M = config.maxTokensPerRank;
  const H = config.hidden;
  const dp = config.dpSize;
  const got = readReceived(ctx, rank, STAGE);
  const sent = new Int32Array(R);
  got.records.forEach((list, s) => {
    const group = Math.floor(s / dp) * dp;
    for (const rec of list) {
      const terms = rec.entries.map((entry) => {
        const row = got.rowOf(s, entry);
        return { w: entry.weight, o: expertOut.subarray(row * H, (row + 1) * H) };
      });
      const partial = partialOf(H, terms);
      for (let home = group; home < group + dp; home++) {
        heaps[home].elems("combineX").set(partial, (rank * M + rec.srcToken) * H);
        sent[home]++;
      }
    }
  });
  for (let home = 0; home < R; home++)
    heaps[home].u32("combineSignal")[rank] = encodeSignal(epoch, sent[home]);
  return sent;
}
