import { PhaseError } from "../errors.js";

/** A rank's position in the step cycle. */
export type Phase = "idle" | "dispatchSent" | "dispatched" | "combineSent";

const NEXT: Record<string, { from: Phase; to: Phase; need: string }> = {
  dispatchSend: { from: "idle", to: "dispatchSent", need: "the previous step's combineRecv" },
  dispatchRecv: { from: "dispatchSent", to: "dispatched", need: "dispatchSend" },
  combineSend: { from: "dispatched", to: "combineSent", need: "dispatchRecv" },
  combineRecv: { from: "combineSent", to: "idle", need: "combineSend" },
};

/**
 * Tracks each rank's phase and step so out-of-order calls are refused with `PhaseError`
 * before anything moves. Backends call `check` first, do the work, then `advance`.
 */
export class PhaseTracker {
  private readonly phases: Phase[];
  private readonly steps: number[];

  constructor(ranks: number) {
    this.phases = new Array(ranks).fill("idle");
    this.steps = new Array(ranks).fill(0);
  }

  /** The step number (from 0) a rank is in. */
  step(rank: number): number {
    return this.steps[rank];
  }

  phase(rank: number): Phase {
    return this.phases[rank];
  }

  check(rank: number, call: keyof typeof NEXT): void {
    const rule = NEXT[call];
    const now = this.phases[rank];
    if (now !== rule.from) {
      throw new PhaseError(rank, call, `rank ${rank} is in phase ${now}; ${call} must follow ${rule.need}`);
    }
  }

  advance(rank: number, call: keyof typeof NEXT): void {
    this.phases[rank] = NEXT[call].to;
    if (call === "combineRecv") this.steps[rank]++;
  }
}
