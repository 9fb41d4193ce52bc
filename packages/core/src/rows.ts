import type { EpConfig } from "./config.js";
import type { DispatchResult } from "./tensors.js";

/** One delivered row as the result describes it. */
export interface RowRef {
  row: number;
  localExpert: number;
}

/**
 * The rows of a dispatch result that carry data, expert by expert, in the order the layout
 * defines (masked: by source rank, then slot; contiguous: block order). Bounds are clamped to the
 * layout so a corrupt count cannot read outside the table.
 */
export function deliveredRows(config: EpConfig, result: DispatchResult): RowRef[] {
  const R = config.ranks;
  const L = config.experts / R;
  const M = config.maxTokensPerRank;
  const rows = result.meta.length / 4;
  const out: RowRef[] = [];
  for (let e = 0; e < L; e++) {
    if (config.layout === "masked") {
      for (let s = 0; s < R; s++) {
        const n = Math.min(result.sourceCounts[e * R + s], M);
        for (let i = 0; i < n; i++) out.push({ row: e * R * M + s * M + i, localExpert: e });
      }
    } else {
      const first = Math.max(0, result.expertOffsets[e]);
      const end = Math.min(first + result.expertCounts[e], rows);
      for (let row = first; row < end; row++) out.push({ row, localExpert: e });
    }
  }
  return out;
}

/** The owner (sending rank) of token `t` of the DP group that contains `rank`. */
export function ownerOf(config: EpConfig, rank: number, t: number): number {
  const group = Math.floor(rank / config.dpSize);
  return group * config.dpSize + (t % config.dpSize);
}
