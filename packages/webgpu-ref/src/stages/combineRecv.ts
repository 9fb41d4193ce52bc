import { combineRecvError, faulted } from "../protocol.js";
import { MAX_GROUPS } from "../schema.js";
import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import type { StageContext } from "./context.js";

/**
 * Combine receive on home rank `rank` (T tokens this step): one submission of combine_recv.wgsl's
 * kernels: the partials summed in ascending expert-rank order, one dispatch per rank and heap
 * window; or with combineWeights home (`weights` fp32 [T, K], validated, uploaded into the rank's
 * topkWeights) the (token, slot) rows weighted and summed in ascending slot order, one dispatch
 * per slot and heap window. Throws the ProtocolError they report, else returns y [T, hidden]
 * bf16 bits.
 */
export async function combineRecv(
  ctx: StageContext,
  rank: number,
  T: number,
  epoch: number,
  weights?: Float32Array,
): Promise<Uint16Array> {
  const { plan, res, engine } = ctx;
  const { R, H, PWo } = plan;
  const work = res.works[rank];
  const outbox = wholeRange(res.outbox);
  const sub = new Submission(engine, `combineRecv(rank ${rank})`);
  const call = { rank, tokens: T, epoch };
  if (weights && T > 0) sub.write(work, plan.work.at("topkWeights") * 4, weights);
  for (const a of plan.heapWindows) {
    const bind = { work: wholeRange(work), heap: windowRange(res.heaps[rank], a) };
    sub.dispatch("crecvCheck", bind, { ...call, a }, linearGrid(R));
  }
  sub.dispatch("crecvTotal", { work: wholeRange(work) }, call, { x: 1, y: 1 });
  sub.dispatch("crecvClear", { outbox }, call, linearGrid(T * H));
  // expert: peer is the expert rank whose partials are added; home: the slot whose rows are
  const [kernel, terms] = weights ? (["crecvSumSlot", plan.K] as const) : (["crecvSum", R] as const);
  for (let r = 0; r < terms; r++) {
    for (const a of plan.heapWindows) {
      const bind = { work: wholeRange(work), heap: windowRange(res.heaps[rank], a), outbox };
      sub.dispatch(kernel, bind, { ...call, peer: r, a }, { x: 1, y: Math.min(T, MAX_GROUPS) });
    }
  }
  sub.dispatch("crecvFinish", { work: wholeRange(work), outbox }, call, linearGrid(T * PWo));
  sub.read(work, plan.work.at("report") * 4, 32);
  if (T > 0) sub.read(res.outbox, plan.outbox.at("x") * 4, T * PWo * 4);
  const [bytes, yBytes] = await sub.run();
  const status = new Uint32Array(bytes.buffer, bytes.byteOffset, 8);
  if (faulted(status)) throw combineRecvError(rank, status.slice(), epoch, weights !== undefined);
  const y = new Uint16Array(T * H);
  if (T > 0) {
    const packed = new Uint16Array(yBytes.buffer, yBytes.byteOffset, T * PWo * 2);
    for (let t = 0; t < T; t++) y.set(packed.subarray(t * PWo * 2, t * PWo * 2 + H), t * H);
  }
  return y;
}
