import type { RankInput } from "@switchyard/core";
import { brokenBackend, ForwardingSession } from "./wrap.js";

/** Accepts the input, then zeroes the weights of the caller's unused slots in place ("tidying" them). */
export const scribbler = brokenBackend(
  "writes-into-caller-arrays",
  (inner) =>
    new (class extends ForwardingSession {
      override async dispatchSend(rank: number, input: RankInput): Promise<void> {
        await this.inner.dispatchSend(rank, input);
        for (let i = 0; i < input.topkIdx.length; i++) if (input.topkIdx[i] < 0) input.topkWeights[i] = 0;
      }
    })(inner),
);
