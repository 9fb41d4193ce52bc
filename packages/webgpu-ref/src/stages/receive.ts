import { linearGrid, type Submission, wholeRange, windowRange } from "../submission.js";
import type { StageContext } from "./context.js";

/**
 * receive.wgsl's kernels on `rank` into `sub` (dispatch receive, and combine send which reads
 * everything again): the signal words and route records as they are now, then core's checks.
 * The status words and results land in the rank's work buffer (report block).
 */
export function encodeReceive(ctx: StageContext, sub: Submission, rank: number, epoch: number): void {
  const { plan, res } = ctx;
  const { R, L, M } = plan;
  const work = wholeRange(res.works[rank]);
  const call = { rank, epoch, groups: 1 };
  for (const a of plan.heapWindows) {
    const heap = windowRange(res.heaps[rank], a);
    sub.dispatch("rcvSnapshot", { work, heap }, { ...call, a }, linearGrid(R + R * L));
    sub.dispatch("rcvRoutes", { work, heap }, { ...call, a }, linearGrid(R * M));
  }
  sub.dispatch("rcvClear", { work }, call, linearGrid(plan.packRows));
  sub.dispatch("rcvCheck", { work }, call, { x: 1, y: 1 });
}
