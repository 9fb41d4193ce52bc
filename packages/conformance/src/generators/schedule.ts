import fc from "fast-check";
import type { Call, Schedule } from "../harness/drive.js";
import { Rng } from "../harness/rng.js";

/**
 * How the calls of a step are ordered:
 * - phased: all dispatchSends (random order), all dispatchRecvs (random order), all combineSends
 *   (random order), all combineRecvs (random order);
 * - interleaved: as phased, but dispatchRecv and combineSend of different ranks are merged at
 *   random (each rank's combineSend still after its own dispatchRecv);
 * - concurrent: interleaved, issuing each stage's calls without waiting for the previous one.
 */
export type ScheduleMode = "phased" | "interleaved" | "concurrent";

export function makeSchedule(ranks: number, mode: ScheduleMode, seed: number): Schedule {
  const rng = new Rng(seed, 3);
  const sends = rng.permutation(ranks);
  const middle: Call[] = [];
  if (mode === "phased") {
    for (const rank of rng.permutation(ranks)) middle.push({ op: "dispatchRecv", rank });
    for (const rank of rng.permutation(ranks)) middle.push({ op: "combineSend", rank });
  } else {
    const pending = Array.from({ length: ranks }, (_, r) => r);
    const done = new Array<boolean>(ranks).fill(false);
    while (pending.length > 0) {
      const i = rng.int(0, pending.length - 1);
      const rank = pending[i];
      if (!done[rank]) {
        middle.push({ op: "dispatchRecv", rank });
        done[rank] = true;
      } else {
        middle.push({ op: "combineSend", rank });
        pending.splice(i, 1);
      }
    }
  }
  return { sends, middle, recvs: rng.permutation(ranks), concurrent: mode === "concurrent" };
}

export interface ScheduleSpec {
  readonly mode: ScheduleMode;
  readonly seed: number;
}

export function scheduleArb(): fc.Arbitrary<ScheduleSpec> {
  return fc.record({
    mode: fc.constantFrom<ScheduleMode>("phased", "interleaved", "concurrent"),
    seed: fc.nat(),
  });
}

export function describeSchedule(s: Schedule): string {
  const m = s.middle.map((c) => `${c.op === "dispatchRecv" ? "r" : "c"}${c.rank}`).join(" ");
  return `sends ${s.sends.join(",")} | ${m} | recvs ${s.recvs.join(",")}${s.concurrent ? " (concurrent)" : ""}`;
}
