import type { EpConfig } from "./config.js";
import type { DispatchResult } from "./tensors.js";

/** One delivered row as the result describes it. */
export interface RowRef {
  row: number;
  localExpert: number;
}

/**
 * The rows of a dispatch result that carry data, expert by expert, in block order: expert e's
 * rows are expertOffsets[e] + i, i < expertCounts[e] (masked: packed at the front of its [R*M]
 * block). Bounds are clamped to the layout so a corrupt count cannot read outside the table.
 */
export function deliveredRows(config: EpConfig, result: DispatchResult): RowRef[] {
  const R = config.ranks;
  const L = config.experts / R;
  const M = config.maxTokensPerRank;
  const rows = result.meta.length / 4;
  const out: RowRef[] = [];
  for (let e = 0; e < L; e++) {
    const first = Math.max(0, result.expertOffsets[e]);
    const limit = config.layout === "masked" ? Math.min(rows, (e + 1) * R * M) : rows;
    const end = Math.min(first + result.expertCounts[e], limit);
    for (let row = first; row < end; row++) out.push({ row, localExpert: e });
  }
  return out;
}

/** The owner (sending rank) of token `t` of the DP group that contains `rank`. */
export function ownerOf(config: EpConfig, rank: number, t: number): number {
  const group = Math.floor(rank / config.dpSize);
  return group * config.dpSize + (t % config.dpSize);
}
