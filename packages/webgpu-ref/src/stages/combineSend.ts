import { faulted, receiveError } from "../protocol.js";
import { Submission, wholeRange, windowRange } from "../submission.js";
import { bf16Phases, type Delivered, indirect, packedRowIndices, type StageContext } from "./context.js";
import { encodeReceive } from "./receive.js";

/**
 * Combine send on expert rank `rank`: uploads the packed rows' expert outputs (dispatch
 * receive's packing, rows padded to whole words), then one submission that reads and checks this
 * step's signals and records again (receive.wgsl, as core's reference does) and sends each
 * record's partial home (combine_send.wgsl); throws the ProtocolError the checks report (nothing
 * is written then).
 */
export async function combineSend(
  ctx: StageContext,
  rank: number,
  expertOut: Uint16Array,
  delivered: Delivered,
  epoch: number,
): Promise<void> {
  const { plan, res, engine } = ctx;
  const { R, H, PWo } = plan;
  const work = res.works[rank];
  const sub = new Submission(engine, `combineSend(rank ${rank})`);
  const rows = packedRowIndices(plan, delivered);
  const compact = new Uint16Array(rows.length * PWo * 2);
  for (let n = 0; n < rows.length; n++)
    compact.set(expertOut.subarray(rows[n] * H, (rows[n] + 1) * H), n * PWo * 2);
  sub.write(res.expertOut, 0, compact);

  encodeReceive(ctx, sub, rank, epoch);
  const call = { rank, epoch, groups: 1 };
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
  if (faulted(status)) throw receiveError(plan, rank, "combine send", status.slice(), epoch);
}
