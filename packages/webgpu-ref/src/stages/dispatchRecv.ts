import type { DispatchResult } from "@switchyard/core";
import { REPORT_HEAD } from "../plan.js";
import { faulted, receiveError } from "../protocol.js";
import { Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, type Delivered, indirect, packedRowIndices, type StageContext } from "./context.js";
import { encodeReceive } from "./receive.js";

/** Results up to this size are read back in the same round trip as the report. */
const EAGER_READ_BYTES = 1 << 20;

/** Reads the first `rows` packed rows (x, scales, meta) of the outbox. */
function readPacked(sub: Submission, ctx: StageContext, rows: number): void {
  const { plan, res } = ctx;
  sub.read(res.outbox, plan.outbox.at("x") * 4, rows * plan.PWd * 4);
  if (plan.S) sub.read(res.outbox, plan.outbox.at("scales") * 4, rows * plan.S * 4);
  sub.read(res.outbox, plan.outbox.at("meta") * 4, rows * 16);
}

/** The report's results: counts, offsets, records per source, packed rows. */
function deliveredOf(ctx: StageContext, report: Uint32Array): Delivered {
  const { R, L } = ctx.plan;
  const at = (i: number, n: number) => Int32Array.from(report.subarray(REPORT_HEAD + i, REPORT_HEAD + i + n));
  return {
    sourceCounts: at(0, L * R),
    expertCounts: at(L * R, L),
    expertOffsets: at(L * R + L, L),
    records: at(L * R + 2 * L, R),
    packed: report[9],
  };
}

/**
 * Dispatch receive on `rank`: one submission of receive.wgsl's and dispatch_recv.wgsl's kernels
 * that check the signals and records, fan the records out and place the rows; the host reads the
 * report, throws the ProtocolError if the kernels found a fault, else reads the packed rows back
 * into a DispatchResult.
 */
export async function dispatchRecv(
  ctx: StageContext,
  rank: number,
  epoch: number,
): Promise<{ result: DispatchResult; delivered: Delivered }> {
  const { plan, res, engine } = ctx;
  const { H, S, PWd } = plan;
  const work = res.works[rank];
  const label = `dispatchRecv(rank ${rank})`;
  const sub = new Submission(engine, label);
  encodeReceive(ctx, sub, rank, epoch);
  const call = { rank, epoch, groups: 1 };
  const args = plan.work.at("recvArgs");
  const outbox = wholeRange(res.outbox);
  for (const a of plan.heapWindows) {
    const bind = { work: wholeRange(work), heap: windowRange(res.heaps[rank], a), outbox };
    sub.dispatch("recvFan", bind, { ...call, a }, indirect(work, args));
  }
  // recvX / recvScales: symmetric (contiguous, senders write them) or local (masked), as the layout says
  const symmetric = plan.layout.regions.recvX.symmetric;
  const target = symmetric ? res.heaps[rank] : res.locals[rank];
  for (const a of symmetric ? plan.heapWindows : plan.localWindows) {
    for (const phase of bf16Phases(ctx, plan.config.dispatchDtype)) {
      const bind = { work: wholeRange(work), heap: windowRange(target, a), outbox };
      sub.dispatch("recvPlaceX", bind, { ...call, a, phase }, indirect(work, args + (phase === 0 ? 0 : 4)));
    }
  }
  for (const a of plan.localWindows) {
    const bind = { work: wholeRange(work), local: windowRange(res.locals[rank], a), outbox };
    sub.dispatch("recvPlaceMeta", bind, { ...call, a }, indirect(work, args));
  }
  sub.read(work, plan.work.at("report") * 4, plan.reportWords * 4);
  // Small results come back with the report (one round trip); large ones once their size is known.
  const eager = plan.packRows * (PWd + S + 4) * 4 <= EAGER_READ_BYTES;
  if (eager) readPacked(sub, ctx, plan.packRows);
  const [reportBytes, ...eagerRows] = await sub.run();
  const report = new Uint32Array(reportBytes.buffer, reportBytes.byteOffset, plan.reportWords);
  if (faulted(report)) throw receiveError(plan, rank, "dispatch recv", report.slice(0, 8), epoch);
  const delivered = deliveredOf(ctx, report);
  const { packed } = delivered;

  const rows = plan.layout.rows;
  const fp8 = plan.config.dispatchDtype === "fp8-e4m3";
  const x = fp8 ? new Uint8Array(rows * H) : new Uint16Array(rows * H);
  const scales = S ? new Float32Array(rows * S) : null;
  const meta = new Int32Array(rows * 4);
  if (packed > 0) {
    let parts = eagerRows;
    if (!eager) {
      const back = new Submission(engine, label);
      readPacked(back, ctx, packed);
      parts = await back.run();
    }
    const [px, ...rest] = parts;
    const ps = S ? new Float32Array(rest[0].buffer, rest[0].byteOffset, packed * S) : null;
    const pm = new Int32Array(rest[S ? 1 : 0].buffer, rest[S ? 1 : 0].byteOffset, packed * 4);
    const target = packedRowIndices(plan, delivered);
    for (let n = 0; n < packed; n++) {
      const row = target[n];
      if (fp8) (x as Uint8Array).set(px.subarray(n * PWd * 4, n * PWd * 4 + H), row * H);
      else (x as Uint16Array).set(new Uint16Array(px.buffer, px.byteOffset + n * PWd * 4, H), row * H);
      if (scales && ps) scales.set(ps.subarray(n * S, (n + 1) * S), row * S);
      meta.set(pm.subarray(n * 4, n * 4 + 4), row * 4);
    }
  }
  const { sourceCounts, expertCounts, expertOffsets } = delivered;
  return {
    result: {
      x,
      scales,
      meta,
      expertOffsets: expertOffsets.slice(),
      expertCounts: expertCounts.slice(),
      sourceCounts: sourceCounts.slice(),
    },
    delivered,
  };
}
