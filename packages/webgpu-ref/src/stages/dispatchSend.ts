import type { DispatchInput } from "@switchyard/core";
import { MAX_GROUPS } from "../schema.js";
import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, indirect, type StageContext } from "./context.js";

/** Bytes of a typed array, padded to a multiple of 4 (writeBuffer's unit). */
function padded(a: Uint16Array | Uint8Array): Uint8Array {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (bytes.byteLength % 4 === 0) return bytes;
  const out = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
  out.set(bytes);
  return out;
}

/**
 * Dispatch send for rank `src` (a validated input of T tokens): uploads the input, then one
 * submission of dispatch_send.wgsl's kernels. masked: the records, rows and signals go to every
 * destination. contiguous: only the counts go out; the input (quantised) is kept in the rank's
 * send buffer for the continuation (stages/dispatchWrite.ts). Never waits for other ranks.
 */
export async function dispatchSend(
  ctx: StageContext,
  src: number,
  input: DispatchInput,
  T: number,
  epoch: number,
): Promise<void> {
  const { plan, res, engine } = ctx;
  const { R, L, S, E } = plan;
  const work = res.works[src];
  const sub = new Submission(engine, `dispatchSend(rank ${src})`);
  sub.write(work, plan.work.at("topkIdx") * 4, input.topkIdx);
  // combineWeights home: no weights at dispatch, the route records carry +0 (combineRecv uploads them)
  sub.write(work, plan.work.at("topkWeights") * 4, input.topkWeights ?? new Float32Array(T * plan.K));
  sub.write(res.inbox, plan.inbox.at("x") * 4, padded(input.x));
  if (input.scales) sub.write(res.inbox, plan.inbox.at("xScales") * 4, input.scales);
  const call = { rank: src, tokens: T, epoch, groups: 1 };
  if (plan.quantize && T > 0) {
    sub.dispatch("quantAmax", { inbox: wholeRange(res.inbox) }, call, linearGrid(T * S));
    sub.dispatch("quantEncode", { inbox: wholeRange(res.inbox) }, call, { x: 1, y: Math.min(T, MAX_GROUPS) });
  }
  sub.dispatch("sendRoute", { work: wholeRange(work) }, call, linearGrid(R));
  if (plan.config.layout === "contiguous") {
    sub.copy(res.inbox, 0, res.sends[src], 0, res.inbox.size);
    for (let dst = 0; dst < R; dst++) {
      for (const a of plan.heapWindows) {
        const bind = { work: wholeRange(work), heap: windowRange(res.heaps[dst], a) };
        sub.dispatch("sendAnnounce", bind, { ...call, a }, linearGrid(E));
      }
    }
    await sub.run();
    return;
  }
  const phases = bf16Phases(ctx, plan.config.dispatchDtype);
  for (let dst = 0; dst < R; dst++) {
    for (const a of plan.heapWindows) {
      for (const phase of phases) {
        const bind = {
          work: wholeRange(work),
          inbox: wholeRange(res.inbox),
          heap: windowRange(res.heaps[dst], a),
        };
        const args = plan.work.at("sendArgs") + dst * 8 + (phase === 0 ? 0 : 4);
        sub.dispatch("sendPut", bind, { ...call, peer: dst, a, phase }, indirect(work, args));
      }
    }
  }
  // Signals after every row of this step (dispatches in one pass run in order).
  for (let dst = 0; dst < R; dst++) {
    for (const a of plan.heapWindows) {
      const bind = { work: wholeRange(work), heap: windowRange(res.heaps[dst], a) };
      sub.dispatch("sendSignal", bind, { ...call, peer: dst, a }, linearGrid(L + 1));
    }
  }
  await sub.run();
}
