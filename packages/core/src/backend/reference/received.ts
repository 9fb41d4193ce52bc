import { ProtocolError } from "../../errors.js";
import { alignUp } from "../../layout/region.js";
import { readSignal, type StepContext } from "./context.js";
import { type RouteEntry, type RouteRecord, readRecord } from "./routes.js";

/** What a rank received in a step's dispatch, read back from its heap and checked. */
export interface Received {
  /** [L, R]: rows each source announced for each local expert (`counts[e * R + s]`). */
  counts: Int32Array;
  /** records[s]: the route records from source s, in the order sent. */
  records: RouteRecord[][];
  /** [L]: first row of each local expert's block (masked e*R*M; contiguous padded prefix sums). */
  offsets: Int32Array;
  /** [L]: rows of each local expert. */
  expertCounts: Int32Array;
  /** The output row of an entry of a record from source `src`. */
  rowOf(src: number, entry: RouteEntry): number;
}

/**
 * Reads this step's signals and route records on `rank` as a receive kernel would, checking each:
 * every source's counts (masked: its local experts; contiguous: this rank's experts of its world
 * vector), its record count, and every record against those counts; each (expert, index) of a
 * source must be named exactly once. Anything else is a ProtocolError naming the peer.
 */
export function readReceived(ctx: StepContext, rank: number, stage: string): Received {
  const { config, layout, heaps, epoch } = ctx;
  const R = config.ranks;
  const L = config.experts / R;
  const M = config.maxTokensPerRank;
  const masked = config.layout === "masked";
  const heap = heaps[rank];
  const countSig = heap.u32("countSignal");
  const counts = new Int32Array(L * R);
  for (let s = 0; s < R; s++) {
    for (let e = 0; e < L; e++) {
      const at = masked ? s * L + e : s * config.experts + rank * L + e;
      const where = { rank, stage, region: "countSignal", peer: s, epoch, max: M };
      counts[e * R + s] = readSignal(countSig[at], where);
    }
  }
  const offsets = new Int32Array(L);
  const expertCounts = new Int32Array(L);
  const prefix = new Int32Array(L * R);
  let next = 0;
  for (let e = 0; e < L; e++) {
    offsets[e] = masked ? e * R * M : next;
    for (let s = 0; s < R; s++) {
      prefix[e * R + s] = expertCounts[e];
      expertCounts[e] += counts[e * R + s];
    }
    next += alignUp(expertCounts[e], config.expertAlignment);
  }
  const done = heap.u32("dispatchSignal");
  const words = heap.i32("dispatchRoutes");
  const W = layout.routeWords;
  const rowOf = (src: number, entry: RouteEntry) =>
    offsets[entry.localExpert] + prefix[entry.localExpert * R + src] + entry.index;
  const taken = new Uint8Array(layout.rows);
  const records: RouteRecord[][] = [];
  for (let s = 0; s < R; s++) {
    const n = readSignal(done[s], { rank, stage, region: "dispatchSignal", peer: s, epoch, max: M });
    const seen = new Int32Array(L);
    const list: RouteRecord[] = [];
    for (let j = 0; j < n; j++) {
      const where = { rank, stage, src: s, j, slotsPerRank: layout.slotsPerRank, counts };
      const rec = readRecord(config, words, (s * M + j) * W, where);
      for (const entry of rec.entries) {
        const row = rowOf(s, entry);
        if (taken[row])
          throw new ProtocolError(
            rank,
            stage,
            "dispatchRoutes",
            `record ${j} from rank ${s} names local expert ${entry.localExpert}'s index ${entry.index} a second time`,
            s,
          );
        taken[row] = 1;
        seen[entry.localExpert]++;
      }
      list.push(rec);
    }
    for (let e = 0; e < L; e++) {
      if (seen[e] !== counts[e * R + s])
        throw new ProtocolError(
          rank,
          stage,
          "dispatchRoutes",
          `rank ${s}'s records name local expert ${e} ${seen[e]} times, its count announced ${counts[e * R + s]}`,
          s,
        );
    }
    records.push(list);
  }
  return {
    counts,
    records,
    offsets,
    expertCounts,
    rowOf,
  };
}
