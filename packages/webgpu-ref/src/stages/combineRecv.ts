import { combineRecvError, faulted } from "../protocol.js";
import { MAX_GROUPS } from "../schema.js";
import { linearGrid, Submission, wholeRange, windowRange } from "../submission.js";
import type { StageContext } from "./context.js";

/**
 * Combine receive on home rank `rank` (T tokens this step): one submission of combine_recv.wgsl's
 * kernels; throws the ProtocolError they report, else returns y [T, hidden] bf16 bits.
 */
export async function combineRecv(
  ctx: StageContext,
  rank: number,
  T: number,
  epoch: number,
): Promise<Uint16Array> {
  const { plan, res, engine } = ctx;
  const { R, H, PWo } = plan;
  const work = res.works[rank];
  const sub = new Submission(engine, `combineRecv(rank ${rank})`);
  const call = { rank, tokens: T, epoch };
  for (const a of plan.heapWindows) {
    sub.dispatch(
      "crecvCheck",
      { work: wholeRange(work), heap: windowRange(res.heaps[rank], a) },
      { ...call, a },
      linearGrid(R),
    );
  }
  sub.dispatch("crecvTotal", { work: wholeRange(work) }, call, { x: 1, y: 1 });
  for (const a of plan.heapWindows) {
    const bind = {
      work: wholeRange(work),
      heap: windowRange(res.heaps[rank], a),
      outbox: wholeRange(res.outbox),
    };
    sub.dispatch("crecvSum", bind, { ...call, a }, { x: 1, y: Math.min(T, MAX_GROUPS) });
  }
  sub.read(work, plan.work.at("report") * 4, 32);
  if (T > 0) sub.read(res.outbox, 0, T * PWo * 4);
  const [bytes, yBytes] = await sub.run();
  const status = new Uint32Array(bytes.buffer, bytes.byteOffset, 8);
  if (faulted(status)) throw combineRecvError(rank, status.slice(), epoch);
  const y = new Uint16Array(T * H);
  if (T > 0) {
    const packed = new Uint16Array(yBytes.buffer, yBytes.byteOffset, T * PWo * 2);
    for (let t = 0; t < T; t++) y.set(packed.subarray(t * PWo * 2, t * PWo * 2 + H), t * H);
  }
  return y;
}
