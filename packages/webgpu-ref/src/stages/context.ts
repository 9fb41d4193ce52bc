import type { Layout } from "@switchyard/core";
import type { SessionPlan } from "../plan.js";
import type { Resources } from "../resources.js";
import type { Engine, Grid } from "../submission.js";

/** What every stage's host half sees. */
export interface StageContext {
  plan: SessionPlan;
  res: Resources;
  engine: Engine;
}

/** What dispatchRecv learnt about a rank's rows, kept for its combineSend. */
export interface Delivered {
  /** [L, R] rows from each source for each local expert. */
  sourceCounts: Int32Array;
  /** [L] first row of each local expert. */
  expertOffsets: Int32Array;
  /** Rows delivered (padding excluded). */
  count: number;
}

/** bf16 row copies with odd H share words between rows: three phases, else one. */
export function bf16Phases(ctx: StageContext, dtype: "bf16" | "fp8-e4m3"): number[] {
  return dtype === "bf16" && ctx.plan.H % 2 === 1 ? [0, 1, 2] : [0];
}

/** Indirect args at word `word` of a work buffer. */
export function indirect(buffer: GPUBuffer, word: number): Grid {
  return { indirect: buffer, offset: word * 4 };
}

/** The result rows of a layout in the order kernels list them: (local expert, source, row). */
export function deliveredRowIndices(layout: Layout, d: Delivered): Int32Array {
  const { ranks: R, maxTokensPerRank: M } = layout.config;
  const L = d.expertOffsets.length;
  const rows = new Int32Array(d.count);
  let n = 0;
  for (let e = 0; e < L; e++) {
    let row = d.expertOffsets[e];
    for (let s = 0; s < R; s++) {
      if (layout.config.layout === "masked") row = (e * R + s) * M;
      for (let i = 0; i < d.sourceCounts[e * R + s]; i++) rows[n++] = row++;
    }
  }
  return rows;
}
