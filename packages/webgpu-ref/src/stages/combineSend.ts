import { combineSendError, faulted } from "../protocol.js";
import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, type Delivered, deliveredRowIndices, indirect, type StageContext } from "./context.js";

/**
 * Combine send on expert rank `rank`: uploads the delivered rows' expert outputs (in the order
 * kernels list them, rows padded to whole words), then one submission of combine_send.wgsl's
 * kernels; throws the ProtocolError the kernels report (nothing is written then).
 */
export async function combineSend(
  ctx: StageContext,
  rank: number,
  expertOut: Uint16Array,
  delivered: Delivered,
  epoch: number,
): Promise<void> {
  const { plan, res, engine } = ctx;
  const { R, L, H, PWo } = plan;
  const contiguous = plan.config.layout === "contiguous";
  const work = res.works[rank];
  const sub = new Submission(engine, `combineSend(rank ${rank})`);
  const rows = deliveredRowIndices(plan.layout, delivered);
  const compact = new Uint16Array(rows.length * PWo * 2);
  for (let n = 0; n < rows.length; n++)
    compact.set(expertOut.subarray(rows[n] * H, (rows[n] + 1) * H), n * PWo * 2);
  sub.write(res.expertOut, 0, compact);

  const call = { rank, epoch, groups: 1 };
  const words = contiguous ? R * (L + 1) : L * R;
  for (const a of plan.heapWindows) {
    sub.dispatch(
      "combRecheck",
      { work: wholeRange(work), heap: windowRange(res.heaps[rank], a) },
      { ...call, a },
      linearGrid(words),
    );
  }
  const metaBuffer = contiguous ? res.locals[rank] : res.heaps[rank];
  for (const a of contiguous ? plan.localWindows : plan.heapWindows) {
    sub.dispatch(
      "combRowInfo",
      { work: wholeRange(work), heap: windowRange(metaBuffer, a) },
      { ...call, a },
      linearGrid(plan.D),
    );
  }
  sub.dispatch("combPlan", { work: wholeRange(work) }, call, { x: 1, y: 1 });
  const args = plan.work.at("cArgs");
  for (let home = 0; home < R; home++) {
    const g = Math.floor(home / plan.config.dpSize);
    for (const a of plan.heapWindows) {
      for (const phase of bf16Phases(ctx, "bf16")) {
        const bind = {
          work: wholeRange(work),
          expertOut: wholeRange(res.expertOut),
          heap: windowRange(res.heaps[home], a),
        };
        sub.dispatch(
          "combPut",
          bind,
          { ...call, peer: home, a, phase },
          indirect(work, args + g * 8 + (phase === 0 ? 0 : 4)),
        );
      }
    }
  }
  for (let home = 0; home < R; home++) {
    for (const a of plan.heapWindows) {
      sub.dispatch(
        "combSignal",
        { work: wholeRange(work), heap: windowRange(res.heaps[home], a) },
        { ...call, peer: home, a },
        { x: 1, y: 1 },
      );
    }
  }
  sub.read(work, plan.work.at("report") * 4, 32);
  const [bytes] = await sub.run();
  const status = new Uint32Array(bytes.buffer, bytes.byteOffset, 8);
  if (faulted(status)) throw combineSendError(plan, rank, status.slice());
}
