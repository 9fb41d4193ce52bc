import { type DispatchResult, InputError, type RankInput } from "@switchyard/core";
import { brokenBackend, ForwardingSession } from "./wrap.js";

/** Accepts out-of-range and repeated expert ids, quietly turning them into unused slots. */
export const lenientIndices = brokenBackend(
  "accepts-bad-indices",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchSend(rank: number, input: RankInput): Promise<void> {
        try {
          await this.inner.dispatchSend(rank, input);
        } catch (e) {
          if (!(e instanceof InputError) || e.what !== "topkIdx") throw e;
          const K = this.config.topK;
          const idx = input.topkIdx.slice();
          for (let i = 0; i < idx.length; i++) {
            const first = i - (i % K);
            const repeated = idx.subarray(first, i).includes(idx[i]);
            if (idx[i] < -1 || idx[i] >= this.config.experts || (idx[i] >= 0 && repeated)) idx[i] = -1;
          }
          await this.inner.dispatchSend(rank, { ...input, topkIdx: idx });
        }
      }
    })(inner),
);

/** Refuses too many tokens only after sending the first maxTokensPerRank of them (something moved). */
export const lateRefusal = brokenBackend(
  "refuses-too-late",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchSend(rank: number, input: RankInput): Promise<void> {
        const { topK: K, hidden: H, maxTokensPerRank: M } = this.config;
        if (input.topkIdx instanceof Int32Array && input.topkIdx.length > M * K) {
          await this.inner.dispatchSend(rank, {
            x: input.x.slice(0, M * H),
            ...(input.scales ? { scales: input.scales.slice(0, (M * H) / 128) } : {}),
            topkIdx: input.topkIdx.slice(0, M * K),
            topkWeights: input.topkWeights.slice(0, M * K),
          });
          throw new InputError(rank, "tokens", `more than ${M} tokens`);
        }
        return this.inner.dispatchSend(rank, input);
      }
    })(inner),
);

/** Answers a receive called too early with an empty result instead of PhaseError. */
export const laxPhases = brokenBackend(
  "lax-phases",
  (inner) =>
    new (class extends ForwardingSession {
      override async combineRecv(rank: number): Promise<Uint16Array> {
        try {
          return await this.inner.combineRecv(rank);
        } catch (e) {
          if ((e as Error).name === "PhaseError") return new Uint16Array(0);
          throw e;
        }
      }
    })(inner),
);

/** Turns "rank N never sent" into an anonymous error that names neither the error class nor the rank. */
export const anonymousTimeout = brokenBackend(
  "anonymous-timeout",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchRecv(rank: number): Promise<DispatchResult> {
        try {
          return await this.inner.dispatchRecv(rank);
        } catch (e) {
          if ((e as Error).name === "ProtocolError") throw new Error("dispatch timed out");
          throw e;
        }
      }
    })(inner),
);
