import { combineWeightsOf } from "../../combineWeights.js";
import { partialOf } from "../../reference/combine.js";
import { encodeSignal } from "../../signal.js";
import type { StepContext } from "./context.js";
import { type Received, readReceived } from "./received.js";

const STAGE = "combine send";

/**
 * Combine send on expert rank `rank` (docs/protocol.md). With `combineWeights` `expert`: for every
 * route record of this step, the partial of its entries (fp32, slot order, rounded to bf16) goes
 * to combineX[rank][srcToken] on every rank of the source's DP group. With `home`: every entry's
 * expert output row goes unweighted to combineX[srcToken][slot] on each of them. Then one signal
 * per home rank (combineSignal[rank], count = records written to it: partials, or tokens whose
 * rows it got). Which records arrived is read again from this step's signals, as a kernel would.
 * Returns the rows written to each home rank (partials, or (token, slot) rows).
 */
export function combineSend(ctx: StepContext, rank: number, expertOut: Uint16Array): Int32Array {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const dp = config.dpSize;
  const got = readReceived(ctx, rank, STAGE);
  const home = combineWeightsOf(config) === "home";
  const sent = new Int32Array(R);
  const tokens = new Int32Array(R);
  got.records.forEach((list, s) => {
    const group = Math.floor(s / dp) * dp;
    for (const rec of list) {
      const rows = home
        ? rowsOf(ctx, got, s, rec, expertOut)
        : partialOfRecord(ctx, got, s, rec, expertOut, rank);
      for (let h = group; h < group + dp; h++) {
        const combineX = heaps[h].elems("combineX");
        for (const { at, row } of rows) combineX.set(row, at);
        sent[h] += rows.length;
        tokens[h]++;
      }
    }
  });
  for (let h = 0; h < R; h++) heaps[h].u32("combineSignal")[rank] = encodeSignal(epoch, tokens[h]);
  return sent;
}

type Rec = Received["records"][number][number];

/** expert: one row, the record's partial, at element (rank * M + srcToken) * H of combineX. */
function partialOfRecord(
  ctx: StepContext,
  got: Received,
  s: number,
  rec: Rec,
  expertOut: Uint16Array,
  rank: number,
): { at: number; row: Uint16Array }[] {
  const H = ctx.config.hidden;
  const terms = rec.entries.map((entry) => {
    const row = got.rowOf(s, entry);
    return { w: entry.weight, o: expertOut.subarray(row * H, (row + 1) * H) };
  });
  return [{ at: (rank * ctx.config.maxTokensPerRank + rec.srcToken) * H, row: partialOf(H, terms) }];
}

/** home: each entry's output row, unweighted, at element (srcToken * K + slot) * H of combineX. */
function rowsOf(
  ctx: StepContext,
  got: Received,
  s: number,
  rec: Rec,
  expertOut: Uint16Array,
): { at: number; row: Uint16Array }[] {
  const H = ctx.config.hidden;
  const K = ctx.config.topK;
  return rec.entries.map((entry) => {
    const row = got.rowOf(s, entry);
    return { at: (rec.srcToken * K + entry.slot) * H, row: expertOut.subarray(row * H, (row + 1) * H) };
  });
}
