import {
  blockPlacement,
  combineToken,
  type DispatchResult,
  deliveredRows,
  ownerOf,
  partialOf,
  type RankInput,
  type Session,
  slotsByRank,
  sumPartials,
} from "@switchyard/core";
import { brokenBackend, ForwardingSession } from "./wrap.js";

/** How a broken combine sums one token: slots grouped by rank (ascending), outputs by slot. */
type Sum = (
  hidden: number,
  idx: Int32Array,
  w: Float32Array,
  byRank: [number, number[]][],
  out: (k: number) => Uint16Array,
) => Uint16Array;

/**
 * Runs the step through the reference, then recomputes each rank's combined output itself from the
 * expert outputs it saw, summing with `sum` instead of the protocol's order.
 */
function recombining(name: string, sum: Sum) {
  return brokenBackend(
    name,
    (inner: Session) =>
      new (class extends ForwardingSession {
        private readonly inputs = new Map<number, RankInput>();
        private readonly outputs = new Map<string, Uint16Array>();
        private readonly results = new Map<number, DispatchResult>();

        override async dispatchSend(rank: number, input: RankInput): Promise<void> {
          await this.inner.dispatchSend(rank, input);
          this.inputs.set(rank, input);
        }

        override async dispatchRecv(rank: number): Promise<DispatchResult> {
          const r = await this.inner.dispatchRecv(rank);
          this.results.set(rank, r);
          return r;
        }

        override async combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
          await this.inner.combineSend(rank, expertOut);
          const r = this.results.get(rank)!;
          const H = this.config.hidden;
          for (const { row } of deliveredRows(this.config, r)) {
            const [src, token, slot] = r.meta.subarray(row * 4, row * 4 + 3);
            this.outputs.set(`${src},${token},${slot}`, expertOut.slice(row * H, (row + 1) * H));
          }
        }

        override async combineRecv(rank: number): Promise<Uint16Array> {
          const y = (await this.inner.combineRecv(rank)).slice();
          const input = this.inputs.get(rank)!;
          const { topK: K, hidden: H } = this.config;
          const placement = blockPlacement(this.config);
          for (let t = 0; t < y.length / H; t++) {
            const src = ownerOf(this.config, rank, t);
            const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
            const w = input.topkWeights.subarray(t * K, (t + 1) * K);
            const out = (k: number) => this.outputs.get(`${src},${t},${k}`)!;
            y.set(sum(H, idx, w, slotsByRank(idx, placement.rankOf), out), t * H);
          }
          return y;
        }
      })(inner),
  );
}

/** Sums the partials in descending rank order (the partials themselves are right). */
export const partialsDescending = recombining("partials-descending", (H, _idx, w, byRank, out) =>
  sumPartials(
    H,
    byRank
      .map(([, slots]) =>
        partialOf(
          H,
          slots.map((k) => ({ w: w[k], o: out(k) })),
        ),
      )
      .reverse(),
  ),
);

/** Version 1's order: every slot in slot order in fp32, no per-rank partial rounded to bf16. */
export const noPartials = recombining("no-partials", (H, idx, w, _byRank, out) =>
  combineToken(H, idx, w, () => 0, out),
);
