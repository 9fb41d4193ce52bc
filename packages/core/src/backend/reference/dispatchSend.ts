import { scalesPerRow } from "../../config.js";
import { alignUp } from "../../layout/region.js";
import { dispatchPayload } from "../../reference/dispatch.js";
import { decodeSignal, encodeSignal } from "../../signal.js";
import type { DispatchInput } from "../../tensors.js";
import type { StepContext } from "./context.js";
import { planRoutes, type RoutePlan, writeRecord } from "./routes.js";

/** A contiguous sender between announcing its counts and writing its rows. */
export interface PendingSend {
  src: number;
  input: DispatchInput;
  plan: RoutePlan;
}

/**
 * Dispatch send for source rank `src` (docs/protocol.md). Each destination gets one route record
 * per token this rank owns that routes there, in token order.
 * - masked: payload, scales and record j go to dispatchX/Scales/Routes[src][j] on the
 *   destination, then the per-local-expert counts (countSignal[src][e]), then dispatchSignal[src].
 * - contiguous: only the counts move now (countSignal[src][*], all E experts, on every rank); the
 *   rows follow in `dispatchWrite` once every rank's counts are here (`countsArrived`).
 * Returns the plan and the records sent to each destination rank.
 */
export function dispatchSend(
  ctx: StepContext,
  src: number,
  input: DispatchInput,
): { plan: RoutePlan; sent: Int32Array } {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const E = config.experts;
  const plan = planRoutes(config, src, input);
  const sent = Int32Array.from(plan.records, (r) => r.length);
  if (config.layout === "contiguous") {
    for (const heap of heaps) {
      const sig = heap.u32("countSignal");
      for (let e = 0; e < E; e++) sig[src * E + e] = encodeSignal(epoch, plan.counts[e]);
    }
    return { plan, sent };
  }
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const M = config.maxTokensPerRank;
  const W = ctx.layout.routeWords;
  const payload = dispatchPayload(config, input);
  for (let dst = 0; dst < R; dst++) {
    const heap = heaps[dst];
    const x = heap.elems("dispatchX");
    const scales = heap.f32("dispatchScales");
    const routes = heap.i32("dispatchRoutes");
    plan.records[dst].forEach((rec, j) => {
      const slot = src * M + j;
      const t = rec.srcToken;
      x.set(payload.x.subarray(t * H, (t + 1) * H), slot * H);
      if (S && payload.scales) scales.set(payload.scales.subarray(t * S, (t + 1) * S), slot * S);
      writeRecord(routes, slot * W, rec);
    });
    const counts = heap.u32("countSignal");
    for (let e = 0; e < L; e++) counts[src * L + e] = encodeSignal(epoch, plan.counts[dst * L + e]);
    heap.u32("dispatchSignal")[src] = encodeSignal(epoch, plan.records[dst].length);
  }
  return { plan, sent };
}

/** Contiguous: whether every rank's counts of this step have arrived on `src` (its wait is over). */
export function countsArrived(ctx: StepContext, src: number): boolean {
  const sig = ctx.heaps[src].u32("countSignal");
  for (let i = 0; i < sig.length; i++) if (decodeSignal(sig[i])?.epoch !== ctx.epoch) return false;
  return true;
}

/**
 * Contiguous, after `countsArrived`: source `src` writes each routed token's payload once per
 * destination, at the final row of its record's first entry, then its records, then
 * dispatchSignal[src]. Expert block e of destination d starts at
 * base_d(e) = sum over e' < e of alignUp(sum over s of count[s][d*L+e'], A), and src's rows of it
 * at base_d(e) + sum over s < src of count[s][d*L+e]. Counts are read from src's own heap, as the
 * kernel would.
 */
export function dispatchWrite(ctx: StepContext, pending: PendingSend): void {
  const { config, heaps, epoch, layout } = ctx;
  const { src, input, plan } = pending;
  const R = config.ranks;
  const L = config.experts / R;
  const E = config.experts;
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const M = config.maxTokensPerRank;
  const W = layout.routeWords;
  const sig = heaps[src].u32("countSignal");
  const count = (s: number, e: number) => decodeSignal(sig[s * E + e])?.count ?? 0;
  const payload = dispatchPayload(config, input);
  for (let dst = 0; dst < R; dst++) {
    const first = new Int32Array(L);
    let base = 0;
    for (let e = 0; e < L; e++) {
      let before = 0;
      let total = 0;
      for (let s = 0; s < R; s++) {
        const c = count(s, dst * L + e);
        if (s < src) before += c;
        total += c;
      }
      first[e] = base + before;
      base += alignUp(total, config.expertAlignment);
    }
    const heap = heaps[dst];
    const x = heap.elems("recvX");
    const scales = heap.f32("recvScales");
    const routes = heap.i32("dispatchRoutes");
    plan.records[dst].forEach((rec, j) => {
      const t = rec.srcToken;
      const row = first[rec.entries[0].localExpert] + rec.entries[0].index;
      x.set(payload.x.subarray(t * H, (t + 1) * H), row * H);
      if (S && payload.scales) scales.set(payload.scales.subarray(t * S, (t + 1) * S), row * S);
      writeRecord(routes, (src * M + j) * W, rec);
    });
    heap.u32("dispatchSignal")[src] = encodeSignal(epoch, plan.records[dst].length);
  }
}
