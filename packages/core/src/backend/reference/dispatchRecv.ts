import { scalesPerRow } from "../../config.js";
import { alignUp } from "../../layout/region.js";
import type { DispatchResult } from "../../tensors.js";
import type { StepContext } from "./context.js";
import { type Received, readReceived } from "./received.js";

const STAGE = "dispatch recv";

/**
 * Dispatch receive on `rank` (docs/protocol.md): checks every signal and record, then fans each
 * record out to its local experts' rows and writes their provenance.
 * - masked: copies record j's payload from dispatchX[s][j] to every entry's packed row.
 * - contiguous: the payload already sits at the first entry's row; copies it to the other
 *   entries' rows, then each block's padding rows: meta (-1, -1, -1, e), and x and scales 0 here
 *   (the protocol leaves them unspecified; a backend need not write them).
 * Returns a host copy of the output and what was received (for the stats).
 */
export function dispatchRecv(ctx: StepContext, rank: number): { result: DispatchResult; received: Received } {
  const { config, layout, heaps } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const H = config.hidden;
  const M = config.maxTokensPerRank;
  const S = scalesPerRow(config, config.dispatchDtype);
  const masked = config.layout === "masked";
  const heap = heaps[rank];
  const got = readReceived(ctx, rank, STAGE);
  const x = heap.elems("recvX");
  const scales = heap.f32("recvScales");
  const meta = heap.i32("recvMeta");
  const sx = masked ? heap.elems("dispatchX") : x;
  const ss = masked ? heap.f32("dispatchScales") : scales;
  got.records.forEach((list, s) => {
    list.forEach((rec, j) => {
      const from = masked ? s * M + j : got.rowOf(s, rec.entries[0]);
      for (const entry of rec.entries) {
        const row = got.rowOf(s, entry);
        if (masked) {
          x.set(sx.subarray(from * H, (from + 1) * H), row * H);
          if (S) scales.set(ss.subarray(from * S, (from + 1) * S), row * S);
        } else if (row !== from) {
          x.copyWithin(row * H, from * H, (from + 1) * H);
          if (S) scales.copyWithin(row * S, from * S, (from + 1) * S);
        }
        meta.set([s, rec.srcToken, entry.slot, entry.localExpert], row * 4);
      }
    });
  });
  if (!masked) {
    for (let e = 0; e < L; e++) {
      const end = got.offsets[e] + alignUp(got.expertCounts[e], config.expertAlignment);
      for (let row = got.offsets[e] + got.expertCounts[e]; row < end; row++) {
        x.fill(0, row * H, (row + 1) * H);
        if (S) scales.fill(0, row * S, (row + 1) * S);
        meta.set([-1, -1, -1, e], row * 4);
      }
    }
  }
  const result: DispatchResult = {
    x: x.slice(0, layout.rows * H),
    scales: S ? scales.slice(0, layout.rows * S) : null,
    meta: meta.slice(0, layout.rows * 4),
    expertOffsets: got.offsets,
    expertCounts: got.expertCounts,
    sourceCounts: got.counts,
  };
  return { result, received: got };
}
