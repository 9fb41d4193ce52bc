import {
  combineWeightsOf,
  decodeSignal,
  peerTraffic,
  STEP_CALLS,
  type StepCall,
  type StepStats,
} from "@switchyard/core";
import type { Delivered, StageContext } from "./stages/context.js";
import { Submission } from "./submission.js";

/**
 * A rank's counters for its latest step (core's StatsRecorder semantics, protocol version 2: a
 * dispatch row is a route record, a combine row a partial, or with combineWeights home a
 * (token, slot) row), read from what its own calls left in its work buffer (only its own calls
 * write there): records per destination of dispatch send (`sendRecs [R]`), combine rows per DP
 * group of combine send (`sentRows [G]`, written to every home rank of the group) and, for
 * combine receive, the signal words it read (`combineCounts [R]`: partials) or at home the rows
 * each expert rank sent it (`combineRows [R]`: its tokens' used slots there, counted once the
 * signals matched them); dispatch receive's records per source come from the report it returned.
 * Wait times are null: calls run one after another and a receive checks each signal once, so
 * nothing waits.
 */
export async function readStats(
  ctx: StageContext,
  rank: number,
  at: { step: number; completed: StepCall | null },
  delivered: Delivered | null,
): Promise<StepStats> {
  const { plan, res, engine } = ctx;
  const { config, R, G } = plan;
  const atHome = combineWeightsOf(config) === "home";
  const done = at.completed === null ? 0 : STEP_CALLS.indexOf(at.completed) + 1;
  let sendRecs: Uint32Array | null = null;
  let sent: Uint32Array | null = null;
  let words: Uint32Array | null = null;
  if (done > 0) {
    const work = res.works[rank];
    const sub = new Submission(engine, `stats(rank ${rank})`);
    sub.read(work, plan.work.at("sendRecs") * 4, R * 4);
    sub.read(work, plan.work.at("sentRows") * 4, G * 4);
    sub.read(work, plan.work.at(atHome ? "combineRows" : "combineCounts") * 4, R * 4);
    const u32 = (b: Uint8Array, n: number) => new Uint32Array(b.buffer, b.byteOffset, n);
    const [a, b, c] = await sub.run();
    sendRecs = u32(a, R);
    sent = u32(b, G);
    words = u32(c, R);
  }
  const home = (h: number) => sent![Math.floor(h / config.dpSize)];
  return Object.freeze({
    rank,
    step: at.step,
    completed: at.completed,
    dispatchSent: done >= 1 ? peerTraffic(config, "dispatch", sendRecs!) : null,
    dispatchReceived: done >= 2 && delivered ? peerTraffic(config, "dispatch", delivered.records) : null,
    combineSent:
      done >= 3
        ? peerTraffic(
            config,
            "combine",
            Array.from({ length: R }, (_, h) => home(h)),
          )
        : null,
    combineReceived:
      done >= 4
        ? peerTraffic(
            config,
            "combine",
            Array.from(words!, (w) => (atHome ? w : (decodeSignal(w)?.count ?? 0))),
          )
        : null,
    dispatchWaitMs: null,
    combineWaitMs: null,
  });
}
