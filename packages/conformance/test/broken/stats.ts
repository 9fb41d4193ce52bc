import { peerTraffic, type RankInput, type StepStats } from "@switchyard/core";
import { brokenBackend, ForwardingSession } from "./wrap.js";

/**
 * Reports a row per (token, expert) sent to each destination, as a protocol that crosses to a
 * rank once per expert would move: a token routed to two experts of one rank counts twice.
 */
export const statsRowsPerExpert = brokenBackend(
  "stats-rows-per-expert",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly tokens = new Map<number, number[]>();

      override async dispatchSend(rank: number, input: RankInput): Promise<void> {
        await this.inner.dispatchSend(rank, input);
        const { ranks: R, experts: E, topK: K, dpSize: dp } = this.config;
        const perDst = new Array<number>(R).fill(0);
        for (let t = 0; t < input.topkIdx.length / K; t++) {
          if (t % dp !== rank % dp) continue;
          for (let k = 0; k < K; k++) {
            const e = input.topkIdx[t * K + k];
            if (e >= 0) perDst[Math.floor(e / (E / R))]++;
          }
        }
        this.tokens.set(rank, perDst);
      }

      override async stats(rank: number): Promise<StepStats> {
        const s = await this.inner.stats!(rank);
        const perDst = this.tokens.get(rank);
        if (!s.dispatchSent || !perDst) return s;
        return { ...s, dispatchSent: peerTraffic(this.config, "dispatch", perDst) };
      }
    })(inner),
);

/** Keeps the previous step's combine counters after the next dispatchSend (they should be cleared). */
export const statsStale = brokenBackend(
  "stats-stale",
  (inner) =>
    new (class extends ForwardingSession {
      private readonly last = new Map<number, StepStats>();

      override async stats(rank: number): Promise<StepStats> {
        const s = await this.inner.stats!(rank);
        const old = this.last.get(rank);
        if (s.completed === "combineRecv") this.last.set(rank, s);
        if (!old || s.combineSent) return s;
        return { ...s, combineSent: old.combineSent, combineReceived: old.combineReceived };
      }
    })(inner),
);
