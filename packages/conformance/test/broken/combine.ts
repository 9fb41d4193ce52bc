import { type DispatchResult, deliveredRows, ownerOf, type RankInput } from "@switchyard/core";
import { brokenBackend, brokenCombineSend, copyResult, ForwardingSession, valid } from "./wrap.js";

/** Weighs slot k with the weight of slot k+1 (mod K). */
export const wrongWeight = brokenBackend(
  "wrong-weight",
  (inner) =>
    new (class extends ForwardingSession {
      override dispatchSend(rank: number, input: RankInput): Promise<void> {
        if (!valid(this, rank, input)) return this.inner.dispatchSend(rank, input);
        const K = this.config.topK;
        const w = input.topkWeights.map((_, i) => input.topkWeights[i - (i % K) + (((i % K) + 1) % K)]);
        return this.inner.dispatchSend(rank, { ...input, topkWeights: w });
      }
    })(inner),
);

/** Sends the expert outputs of each local expert's first two rows to each other's home. */
export const combineSwap = brokenCombineSend("combine-swapped-homes", (config, r, expertOut) => {
  const H = config.hidden;
  const out = expertOut.slice();
  const rows = deliveredRows(config, r);
  for (let i = 0; i + 1 < rows.length; i++) {
    if (rows[i].localExpert !== rows[i + 1].localExpert) continue;
    out.set(expertOut.subarray(rows[i + 1].row * H, (rows[i + 1].row + 1) * H), rows[i].row * H);
    out.set(expertOut.subarray(rows[i].row * H, (rows[i].row + 1) * H), rows[i + 1].row * H);
    break;
  }
  return out;
});

/**
 * Contiguous: reads each expert block's first padding row where its last row should be (a combine
 * that indexes rows by the padded block's size instead of its count): the expert output there,
 * which the suite fills with NaN as rows that carry no token, reaches y.
 */
export const readsPadding = brokenCombineSend("combine-reads-padding", (config, r, expertOut) => {
  if (config.layout !== "contiguous") return null;
  const H = config.hidden;
  const out = expertOut.slice();
  const rows = r.meta.length / 4;
  for (let e = 0; e < r.expertCounts.length; e++) {
    const n = r.expertCounts[e];
    const last = r.expertOffsets[e] + n - 1;
    const pad = last + 1;
    if (n === 0 || pad >= rows || r.meta[pad * 4] !== -1) continue;
    out.set(expertOut.subarray(pad * H, (pad + 1) * H), last * H);
  }
  return out;
});

/** With DP groups, only the token's owner gets its combined row; the group's other ranks get zeros. */
export const ownerOnly = brokenBackend(
  "dp-owner-only",
  (inner) =>
    new (class extends ForwardingSession {
      override async combineRecv(rank: number): Promise<Uint16Array> {
        const y = (await this.inner.combineRecv(rank)).slice();
        const H = this.config.hidden;
        for (let t = 0; t < y.length / H; t++)
          if (ownerOf(this.config, rank, t) !== rank) y.fill(0, t * H, (t + 1) * H);
        return y;
      }
    })(inner),
);

/** Reuses the dispatch buffers as combine staging: a dispatchRecv after any combineSend of the step sees nothing. */
export const orderSensitive = brokenBackend(
  "needs-all-receives-first",
  (inner) =>
    new (class extends ForwardingSession {
      private combining = false;
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        const r = copyResult(await this.inner.dispatchRecv(rank));
        if (this.combining) {
          r.sourceCounts.fill(0);
          r.expertCounts.fill(0);
        }
        return r;
      }
      override combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
        this.combining = true;
        return this.inner.combineSend(rank, expertOut);
      }
      override combineRecv(rank: number): Promise<Uint16Array> {
        this.combining = false;
        return this.inner.combineRecv(rank);
      }
    })(inner),
);

/** Not deterministic: every other combineRecv flips the lowest bit of the first element. */
export const flaky = brokenBackend(
  "nondeterministic-combine",
  (inner) =>
    new (class extends ForwardingSession {
      private calls = 0;
      override async combineRecv(rank: number): Promise<Uint16Array> {
        const y = (await this.inner.combineRecv(rank)).slice();
        if (this.calls++ % 2 === 1 && y.length > 0) y[0] ^= 1;
        return y;
      }
    })(inner),
);
