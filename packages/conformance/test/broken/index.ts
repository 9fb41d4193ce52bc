import type { Backend } from "@switchyard/core";
import { combineSwap, flaky, orderSensitive, ownerOnly, readsPadding, wrongWeight } from "./combine.js";
import {
  dropRow,
  flushSubnormals,
  ignoreUnused,
  maskedHoles,
  offByOneSlot,
  paddingMeta,
  reversedRows,
  staleCounts,
  swappedProvenance,
} from "./dispatch.js";
import { strictBlockScale } from "./fp8.js";
import { homeWeightsAsPartials, homeWeightsFlushSubnormals, homeWeightsReversed } from "./homeWeights.js";
import { hangsOnMissingRank, reusedBuffers } from "./lifetime.js";
import {
  noPartials,
  partialSlotsReversed,
  partialsDescending,
  sumFromFirstPartial,
  sumFromNegativeZero,
} from "./order.js";
import { unflooredScales } from "./scaleFormat.js";
import { anonymousTimeout, lateRefusal, laxPhases, lenientIndices } from "./session.js";
import { statsRowsPerExpert, statsStale } from "./stats.js";

/** A broken backend and the property that must catch it. */
export interface BrokenCase {
  backend: Backend;
  /** Properties that must fail. */
  targets: string[];
  /** Options of the run beyond the shared seed and runs. */
  options?: { shrinkTimeMs?: number };
  /** The most a target's run may take, shrinking included (ms). */
  maxMs?: number;
}

export const BROKEN: readonly BrokenCase[] = [
  { backend: dropRow, targets: ["dispatch/rows"] },
  { backend: offByOneSlot, targets: ["dispatch/rows"] },
  { backend: ignoreUnused, targets: ["dispatch/rows", "combine/accuracy"] },
  { backend: staleCounts, targets: ["session/many-steps"] },
  { backend: wrongWeight, targets: ["combine/accuracy", "roundtrip/identity"] },
  { backend: swappedProvenance, targets: ["dispatch/payload", "combine/accuracy"] },
  { backend: combineSwap, targets: ["combine/accuracy"] },
  { backend: lenientIndices, targets: ["input/expert-range", "input/repeated-expert"] },
  { backend: lateRefusal, targets: ["input/too-many-tokens"] },
  { backend: laxPhases, targets: ["session/phase-order"] },
  { backend: ownerOnly, targets: ["dp/group-output"] },
  { backend: orderSensitive, targets: ["phases/interleaving"] },
  { backend: flaky, targets: ["combine/repeatable"] },
  { backend: flushSubnormals, targets: ["dispatch/payload"] },
  { backend: paddingMeta, targets: ["dispatch/layout/contiguous"] },
  { backend: readsPadding, targets: ["combine/accuracy"] },
  { backend: reversedRows, targets: ["dispatch/row-order"] },
  { backend: anonymousTimeout, targets: ["session/missing-rank"] },
  { backend: statsRowsPerExpert, targets: ["session/stats"] },
  { backend: maskedHoles, targets: ["dispatch/rows"] },
  { backend: partialsDescending, targets: ["combine/exact-order"] },
  { backend: noPartials, targets: ["combine/exact-order"] },
  { backend: partialSlotsReversed, targets: ["combine/exact-slot-order"] },
  { backend: sumFromFirstPartial, targets: ["combine/zero-sign"] },
  { backend: sumFromNegativeZero, targets: ["combine/zero-sign"] },
  { backend: statsStale, targets: ["session/stats"] },
  { backend: strictBlockScale, targets: ["dispatch/fp8/quantize"] },
  { backend: unflooredScales, targets: ["dispatch/fp8/scale-formats"] },
  { backend: homeWeightsAsPartials, targets: ["combine/home-weights/slot-order", "combine/accuracy"] },
  { backend: homeWeightsReversed, targets: ["combine/home-weights/slot-order"] },
  { backend: homeWeightsFlushSubnormals, targets: ["combine/home-weights/edges"] },
  { backend: reusedBuffers, targets: ["session/back-to-back"] },
  {
    backend: hangsOnMissingRank,
    targets: ["session/missing-rank"],
    options: { shrinkTimeMs: 2_000 },
    // one hung run (5.3 s), 2 s of shrinking, the hung run in flight then (about 11 s in all, mostly
    // timers, so load barely moves it): far below the ~2 min that shrinking without a budget takes
    maxMs: 60_000,
  },
];
