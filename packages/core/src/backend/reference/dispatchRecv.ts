import { scalesPerRow } from "../../config.js";
import { ProtocolError } from "../../errors.js";
import { alignUp } from "../../layout/region.js";
import type { DispatchResult } from "../../tensors.js";
import { readSignal, type StepContext } from "./context.js";

const STAGE = "dispatch recv";

/** Per (local expert, source) row counts of this step, checked: `counts[e * R + s]`. */
export function receivedCounts(ctx: StepContext, rank: number): Int32Array {
  const { config, layout, heaps, epoch } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const heap = heaps[rank];
  const counts = new Int32Array(L * R);
  if (config.layout === "masked") {
    const sig = heap.u32("dispatchSignal");
    for (let e = 0; e < L; e++) {
      for (let s = 0; s < R; s++) {
        const where = {
          rank,
          stage: STAGE,
          region: "dispatchSignal",
          peer: s,
          epoch,
          max: config.maxTokensPerRank,
        };
        counts[e * R + s] = readSignal(sig[e * R + s], where);
      }
    }
    return counts;
  }
  const done = heap.u32("dispatchSignal");
  const perExpert = heap.u32("countSignal");
  for (let s = 0; s < R; s++) {
    const max = layout.rowsPerSource;
    const total = readSignal(done[s], { rank, stage: STAGE, region: "dispatchSignal", peer: s, epoch, max });
    let sum = 0;
    for (let e = 0; e < L; e++) {
      const c = readSignal(perExpert[s * L + e], {
        rank,
        stage: STAGE,
        region: "countSignal",
        peer: s,
        epoch,
        max: config.maxTokensPerRank,
      });
      counts[e * R + s] = c;
      sum += c;
    }
    if (sum !== total) {
      throw new ProtocolError(
        rank,
        STAGE,
        "countSignal",
        `rank ${s} announced ${total} rows but its per-expert counts add up to ${sum}`,
      );
    }
  }
  return counts;
}

/** First row of each local expert's block: masked e*R*M; contiguous padded prefix sums. */
export function expertOffsets(ctx: StepContext, counts: Int32Array): Int32Array {
  const { config } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const offsets = new Int32Array(L);
  let next = 0;
  for (let e = 0; e < L; e++) {
    if (config.layout === "masked") {
      offsets[e] = e * R * config.maxTokensPerRank;
      continue;
    }
    offsets[e] = next;
    let n = 0;
    for (let s = 0; s < R; s++) n += counts[e * R + s];
    next += alignUp(n, config.expertAlignment);
  }
  return offsets;
}

/**
 * Dispatch receive on `rank`: checks every signal, then (contiguous) copies staged rows into the
 * compact, padded output in (expert, srcRank, srcToken) order. Returns a host copy of the rows.
 */
export function dispatchRecv(ctx: StepContext, rank: number): DispatchResult {
  const { config, layout, heaps } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const heap = heaps[rank];
  const counts = receivedCounts(ctx, rank);
  const offsets = expertOffsets(ctx, counts);
  const expertCounts = new Int32Array(L);
  for (let e = 0; e < L; e++) for (let s = 0; s < R; s++) expertCounts[e] += counts[e * R + s];
  if (config.layout === "contiguous") {
    const sx = heap.elems("dispatchX");
    const ss = heap.f32("dispatchScales");
    const sm = heap.i32("dispatchMeta");
    const rx = heap.elems("recvX");
    const rs = heap.f32("recvScales");
    const rm = heap.i32("recvMeta");
    for (let e = 0; e < L; e++) {
      let row = offsets[e];
      for (let s = 0; s < R; s++) {
        let from = s * layout.rowsPerSource;
        for (let f = 0; f < e; f++) from += counts[f * R + s];
        for (let i = 0; i < counts[e * R + s]; i++, row++, from++) {
          rx.set(sx.subarray(from * H, (from + 1) * H), row * H);
          if (S) rs.set(ss.subarray(from * S, (from + 1) * S), row * S);
          rm.set(sm.subarray(from * 4, (from + 1) * 4), row * 4);
        }
      }
      const end = offsets[e] + alignUp(expertCounts[e], config.expertAlignment);
      for (; row < end; row++) {
        rx.fill(0, row * H, (row + 1) * H);
        if (S) rs.fill(0, row * S, (row + 1) * S);
        rm.set([-1, -1, -1, e], row * 4);
      }
    }
  }
  const masked = config.layout === "masked";
  return {
    x: heap.elems(masked ? "dispatchX" : "recvX").slice(),
    scales: S ? heap.f32(masked ? "dispatchScales" : "recvScales").slice() : null,
    meta: heap.i32(masked ? "dispatchMeta" : "recvMeta").slice(),
    expertOffsets: offsets,
    expertCounts,
    sourceCounts: counts,
  };
}
