import type { SessionPlan } from "../plan.js";
import type { Resources } from "../resources.js";
import type { Engine, Grid } from "../submission.js";

/** What every stage's host half sees. */
export interface StageContext {
  plan: SessionPlan;
  res: Resources;
  engine: Engine;
}

/** What dispatchRecv learnt about a rank's rows, kept for its combineSend and stats. */
export interface Delivered {
  /** [L, R] rows from each source for each local expert. */
  sourceCounts: Int32Array;
  /** [L] rows of each local expert. */
  expertCounts: Int32Array;
  /** [L] first row of each local expert. */
  expertOffsets: Int32Array;
  /** [R] route records from each source. */
  records: Int32Array;
  /** Packed rows: masked the rows delivered, contiguous the output rows up to the last block's padding. */
  packed: number;
}

/** bf16 row copies with odd H share words between rows: three phases, else one. */
export function bf16Phases(ctx: StageContext, dtype: "bf16" | "fp8-e4m3"): number[] {
  return dtype === "bf16" && ctx.plan.H % 2 === 1 ? [0, 1, 2] : [0];
}

/** Indirect args at word `word` of a work buffer. */
export function indirect(buffer: GPUBuffer, word: number): Grid {
  return { indirect: buffer, offset: word * 4 };
}

/**
 * The output row of each packed row (receive.wgsl's packed index): masked by (local expert,
 * source, index), expert e's rows packed from e R M; contiguous the row itself.
 */
export function packedRowIndices(plan: SessionPlan, d: Delivered): Int32Array {
  const { R, L, M } = plan;
  const rows = new Int32Array(d.packed);
  if (plan.config.layout === "contiguous") {
    for (let n = 0; n < d.packed; n++) rows[n] = n;
    return rows;
  }
  let n = 0;
  for (let e = 0; e < L; e++) for (let i = 0; i < d.expertCounts[e]; i++) rows[n++] = e * R * M + i;
  return rows;
}
