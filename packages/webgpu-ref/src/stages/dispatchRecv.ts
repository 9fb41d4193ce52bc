import type { DispatchResult } from "@switchyard/core";
import { REPORT_HEAD } from "../plan.js";
import { dispatchRecvError, faulted } from "../protocol.js";
import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, type Delivered, deliveredRowIndices, indirect, type StageContext } from "./context.js";

/** Results up to this size are read back in the same round trip as the report. */
const EAGER_READ_BYTES = 1 << 20;

/** Reads the first `rows` packed rows (x, scales, meta) of the outbox. */
function readPacked(sub: Submission, ctx: StageContext, rows: number): void {
  const { plan, res } = ctx;
  sub.read(res.outbox, plan.outbox.at("x") * 4, rows * plan.PWd * 4);
  if (plan.S) sub.read(res.outbox, plan.outbox.at("scales") * 4, rows * plan.S * 4);
  sub.read(res.outbox, plan.outbox.at("meta") * 4, rows * 16);
}

/**
 * Dispatch receive on `rank`: one submission of dispatch_recv.wgsl's kernels that checks the
 * signals, lays the rows out and packs them; the host reads the report, throws the ProtocolError
 * if the kernels found a fault, else reads the packed rows back into a DispatchResult.
 */
export async function dispatchRecv(
  ctx: StageContext,
  rank: number,
  epoch: number,
): Promise<{ result: DispatchResult; delivered: Delivered }> {
  const { plan, res, engine } = ctx;
  const { R, L, H, S, PWd } = plan;
  const contiguous = plan.config.layout === "contiguous";
  const work = res.works[rank];
  const label = `dispatchRecv(rank ${rank})`;
  const sub = new Submission(engine, label);
  const call = { rank, epoch, groups: 1 };
  const words = contiguous ? R * (L + 1) : L * R;
  for (const a of plan.heapWindows) {
    sub.dispatch(
      "recvSnapshot",
      { work: wholeRange(work), heap: windowRange(res.heaps[rank], a) },
      { ...call, a },
      linearGrid(words),
    );
  }
  sub.dispatch("recvOffsets", { work: wholeRange(work) }, call, { x: 1, y: 1 });
  sub.dispatch("recvDeliver", { work: wholeRange(work) }, call, linearGrid(L * R));
  const args = plan.work.at("recvArgs");
  if (contiguous) {
    for (const a of plan.heapWindows) {
      for (const b of plan.localWindows) {
        for (const phase of bf16Phases(ctx, plan.config.dispatchDtype)) {
          const bind = {
            work: wholeRange(work),
            heap: windowRange(res.heaps[rank], a),
            local: windowRange(res.locals[rank], b),
          };
          sub.dispatch(
            "recvGather",
            bind,
            { ...call, a, b, phase },
            indirect(work, args + (phase === 0 ? 0 : 4)),
          );
        }
      }
    }
  }
  const source = contiguous ? res.locals[rank] : res.heaps[rank];
  for (const a of contiguous ? plan.localWindows : plan.heapWindows) {
    const bind = { work: wholeRange(work), heap: windowRange(source, a), outbox: wholeRange(res.outbox) };
    sub.dispatch("recvPack", bind, { ...call, a }, indirect(work, args));
  }
  sub.read(work, plan.work.at("report") * 4, plan.reportWords * 4);
  // Small results come back with the report (one round trip); large ones once their size is known.
  const eager = plan.packRows * (PWd + S + 4) * 4 <= EAGER_READ_BYTES;
  if (eager) readPacked(sub, ctx, plan.packRows);
  const [reportBytes, ...eagerRows] = await sub.run();
  const report = new Uint32Array(reportBytes.buffer, reportBytes.byteOffset, plan.reportWords);
  if (faulted(report)) throw dispatchRecvError(plan, rank, report.slice(0, 8), epoch);

  const count = report[8];
  const packed = report[9];
  const sourceCounts = Int32Array.from(report.subarray(REPORT_HEAD, REPORT_HEAD + L * R));
  const expertCounts = Int32Array.from(report.subarray(REPORT_HEAD + L * R, REPORT_HEAD + L * R + L));
  const expertOffsets = Int32Array.from(
    report.subarray(REPORT_HEAD + L * R + L, REPORT_HEAD + L * R + 2 * L),
  );
  const delivered: Delivered = { sourceCounts, expertOffsets, count };

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
    const target = contiguous ? null : deliveredRowIndices(plan.layout, delivered);
    for (let n = 0; n < packed; n++) {
      const row = target ? target[n] : n;
      if (fp8) (x as Uint8Array).set(px.subarray(n * PWd * 4, n * PWd * 4 + H), row * H);
      else (x as Uint16Array).set(new Uint16Array(px.buffer, px.byteOffset + n * PWd * 4, H), row * H);
      if (scales && ps) scales.set(ps.subarray(n * S, (n + 1) * S), row * S);
      meta.set(pm.subarray(n * 4, n * 4 + 4), row * 4);
    }
  }
  return { result: { x, scales, meta, expertOffsets, expertCounts, sourceCounts }, delivered };
}
