import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, indirect, type StageContext } from "./context.js";

/** A contiguous sender whose counts went out and whose rows wait for every rank's counts. */
export interface PendingSend {
  src: number;
  /** The epoch of the sender's step. */
  epoch: number;
}

/**
 * The contiguous senders' continuations (dispatch_write.wgsl), in the order given, in one
 * submission: each checks that every rank's counts of its step are on its heap (core's
 * countsArrived) and if so writes its rows, records and signals. Returns the senders still
 * waiting. On a GPU each sender would wait in its kernel; here it runs once the counts are there.
 */
export async function dispatchWrite(ctx: StageContext, pending: PendingSend[]): Promise<PendingSend[]> {
  if (pending.length === 0) return pending;
  const { plan, res, engine } = ctx;
  const { R, E } = plan;
  const sub = new Submission(
    engine,
    `dispatchSend continuation (ranks ${pending.map((p) => p.src).join(", ")})`,
  );
  const phases = bf16Phases(ctx, plan.config.dispatchDtype);
  for (const { src, epoch } of pending) {
    const work = res.works[src];
    const call = { rank: src, epoch, groups: 1 };
    for (const a of plan.heapWindows) {
      const bind = { work: wholeRange(work), heap: windowRange(res.heaps[src], a) };
      sub.dispatch("writeCounts", bind, { ...call, a }, linearGrid(R * E));
    }
    sub.dispatch("writeArrived", { work: wholeRange(work) }, call, { x: 1, y: 1 });
    for (let dst = 0; dst < R; dst++) {
      for (const a of plan.heapWindows) {
        for (const phase of phases) {
          const bind = {
            work: wholeRange(work),
            inbox: wholeRange(res.sends[src]),
            heap: windowRange(res.heaps[dst], a),
          };
          const args = plan.work.at("wArgs") + dst * 8 + (phase === 0 ? 0 : 4);
          sub.dispatch("writePut", bind, { ...call, peer: dst, a, phase }, indirect(work, args));
        }
      }
    }
    for (let dst = 0; dst < R; dst++) {
      for (const a of plan.heapWindows) {
        const bind = { work: wholeRange(work), heap: windowRange(res.heaps[dst], a) };
        sub.dispatch("writeSignal", bind, { ...call, peer: dst, a }, { x: 1, y: 1 });
      }
    }
    sub.read(work, plan.work.at("flag") * 4, 4);
  }
  const flags = await sub.run();
  return pending.filter((_, i) => new Uint32Array(flags[i].buffer, flags[i].byteOffset, 1)[0] === 0);
}
