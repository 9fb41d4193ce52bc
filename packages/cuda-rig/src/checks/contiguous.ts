import {
  alignUp,
  type DispatchResult,
  type EpConfig,
  localExperts,
  type RankInput,
  referenceDispatch,
  scalesPerRow,
} from "@switchyard/core";
import { compareDispatch, expertOutputs, expertRow, sameBits } from "./step.js";

/**
 * Differences between a rank's contiguous dispatch result and core's reference (empty when
 * bit-exact): counts per (expert, source), expert offsets (padded prefix sums), every row's meta,
 * payload and scales in (srcRank, srcToken) order, and every padding row's meta (-1, -1, -1, e)
 * (a padding row's payload and scales are unspecified: docs/protocol.md).
 */
export function compareDispatchContiguous(
  config: EpConfig,
  inputs: RankInput[],
  rank: number,
  got: DispatchResult,
): string[] {
  const ref = referenceDispatch(config, inputs)[rank];
  const R = config.ranks;
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const errors: string[] = [];
  const add = (m: string) => errors.length < 8 && errors.push(`rank ${rank} ${m}`);
  let next = 0;
  for (let e = 0; e < ref.length; e++) {
    const rows = ref[e];
    for (let s = 0; s < R; s++) {
      const want = rows.filter((r) => r.srcRank === s).length;
      if (got.sourceCounts[e * R + s] !== want)
        add(`expert ${e} source ${s}: ${got.sourceCounts[e * R + s]} rows, reference ${want}`);
    }
    if (got.expertOffsets[e] !== next) add(`expert ${e}: offset ${got.expertOffsets[e]}, reference ${next}`);
    rows.forEach((r, i) => {
      const row = next + i;
      const meta = Array.from(got.meta.subarray(row * 4, row * 4 + 4));
      if (meta.join() !== [r.srcRank, r.srcToken, r.slot, e].join()) {
        add(`expert ${e} row ${row}: meta ${meta}, reference ${[r.srcRank, r.srcToken, r.slot, e]}`);
      } else if (!sameBits(got.x.subarray(row * H, (row + 1) * H), r.x)) {
        add(`expert ${e} row ${row} (source ${r.srcRank} token ${r.srcToken}): payload differs`);
      } else if (
        S &&
        r.scales &&
        got.scales &&
        !sameBits(got.scales.subarray(row * S, (row + 1) * S), r.scales)
      ) {
        add(`expert ${e} row ${row}: scales differ`);
      }
    });
    const end = next + alignUp(rows.length, config.expertAlignment);
    for (let row = next + rows.length; row < end; row++) {
      const meta = Array.from(got.meta.subarray(row * 4, row * 4 + 4));
      if (meta.join() !== [-1, -1, -1, e].join()) add(`expert ${e} padding row ${row}: meta ${meta}`);
    }
    next = end;
  }
  return errors;
}

/** bf16 bits of a quiet NaN: a padding row's expert output (combine must never read it). */
const NAN_BF16 = 0x7fc0;

/**
 * Expert outputs [rows, hidden] for the rows a contiguous dispatch delivered to `rank`; padding
 * rows NaN, so a combine that summed one in would not match core's y; other rows 0.
 */
export function expertOutputsContiguous(config: EpConfig, rank: number, result: DispatchResult): Uint16Array {
  const L = localExperts(config);
  const H = config.hidden;
  const out = new Uint16Array((result.meta.length / 4) * H);
  for (let e = 0; e < L; e++) {
    const n = result.expertCounts[e];
    const padEnd = result.expertOffsets[e] + alignUp(n, config.expertAlignment);
    out.fill(NAN_BF16, (result.expertOffsets[e] + n) * H, Math.min(padEnd, result.meta.length / 4) * H);
    for (let i = 0; i < n; i++) {
      const row = result.expertOffsets[e] + i;
      const [src, token, slot] = result.meta.subarray(row * 4, row * 4 + 3);
      out.set(expertRow(H, rank * L + e, src, token, slot), row * H);
    }
  }
  return out;
}

/** compareDispatch for either layout. */
export function compareDispatchAny(
  config: EpConfig,
  inputs: RankInput[],
  rank: number,
  got: DispatchResult,
): string[] {
  return config.layout === "contiguous"
    ? compareDispatchContiguous(config, inputs, rank, got)
    : compareDispatch(config, inputs, rank, got);
}

/** expertOutputs for either layout. */
export function expertOutputsAny(config: EpConfig, rank: number, result: DispatchResult): Uint16Array {
  return config.layout === "contiguous"
    ? expertOutputsContiguous(config, rank, result)
    : expertOutputs(config, rank, result);
}
