import { type EpConfig, validateConfig } from "../../config.js";
import { DestroyedError } from "../../errors.js";
import { checkHostMemory, DEFAULT_HOST_MEMORY_LIMIT } from "../../hostMemory.js";
import { takeCombineWeights, takeRankInput } from "../../inputCopy.js";
import { computeLayout, type Layout } from "../../layout/layout.js";
import { epochOfStep } from "../../signal.js";
import {
  type DispatchInput,
  type DispatchResult,
  tokensOf,
  validateExpertOut,
  validateRank,
} from "../../tensors.js";
import { PhaseTracker } from "../phases.js";
import { StatsRecorder, type StepStats } from "../stats.js";
import type { Session } from "../types.js";
import { combineRecv } from "./combineRecv.js";
import { combineSend } from "./combineSend.js";
import type { StepContext } from "./context.js";
import { dispatchRecv } from "./dispatchRecv.js";
import { countsArrived, dispatchSend, dispatchWrite, type PendingSend } from "./dispatchSend.js";
import { RankHeap } from "./heap.js";

/**
 * The protocol simulated in plain TypeScript: every rank's heap is an ArrayBuffer laid out by
 * `computeLayout`, and each phase runs the stage of the same name. Read it next to
 * docs/writing-a-backend.md: it is the worked example of the interface.
 */
export class ReferenceSession implements Session {
  readonly layout: Layout;
  private readonly heaps: RankHeap[];
  private readonly phases: PhaseTracker;
  private readonly inputs: (DispatchInput | null)[];
  private readonly recorder: StatsRecorder;
  /** Contiguous senders whose counts went out and whose rows wait for every rank's counts. */
  private pending: PendingSend[] = [];
  private destroyed = false;

  /** `memoryLimit`: the most bytes of heaps (all ranks) the session may allocate; a ResourceError past it. */
  constructor(
    readonly config: Readonly<EpConfig>,
    memoryLimit = DEFAULT_HOST_MEMORY_LIMIT,
  ) {
    validateConfig(config);
    this.layout = computeLayout(config);
    checkHostMemory("reference", this.layout, config.ranks, memoryLimit);
    this.heaps = Array.from({ length: config.ranks }, () => new RankHeap(this.layout));
    this.phases = new PhaseTracker(config.ranks);
    this.inputs = new Array(config.ranks).fill(null);
    this.recorder = new StatsRecorder(config);
  }

  private ctx(rank: number): StepContext {
    return {
      config: this.config,
      layout: this.layout,
      heaps: this.heaps,
      epoch: epochOfStep(this.phases.step(rank)),
    };
  }

  private enter(rank: number, call: "dispatchRecv" | "combineSend" | "combineRecv"): void {
    if (this.destroyed) throw new DestroyedError("reference session");
    validateRank(this.config, rank);
    this.phases.check(rank, call);
  }

  async dispatchSend(rank: number, input: DispatchInput): Promise<void> {
    if (this.destroyed) throw new DestroyedError("reference session");
    const kept = takeRankInput(this.config, rank, input).input;
    this.phases.check(rank, "dispatchSend");
    const { plan, sent } = dispatchSend(this.ctx(rank), rank, kept);
    this.inputs[rank] = kept;
    if (this.config.layout === "contiguous") {
      this.pending = this.pending.filter((p) => p.src !== rank);
      this.pending.push({ src: rank, input: kept, plan });
    }
    this.recorder.record(rank, this.phases.step(rank), "dispatchSend", sent);
    this.phases.advance(rank, "dispatchSend");
    this.progress();
  }

  /**
   * Runs the contiguous senders whose wait is over: on a GPU each would wait in its kernel until
   * every rank's counts arrived; here the continuation runs as soon as they are all there.
   */
  private progress(): void {
    this.pending = this.pending.filter((p) => {
      const ctx = this.ctx(p.src);
      if (!countsArrived(ctx, p.src)) return true;
      dispatchWrite(ctx, p);
      return false;
    });
  }

  async dispatchRecv(rank: number): Promise<DispatchResult> {
    this.enter(rank, "dispatchRecv");
    this.progress();
    const { result, received } = dispatchRecv(this.ctx(rank), rank);
    const records = received.records.map((list) => list.length);
    this.recorder.record(rank, this.phases.step(rank), "dispatchRecv", records);
    this.phases.advance(rank, "dispatchRecv");
    return result;
  }

  async combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
    this.enter(rank, "combineSend");
    validateExpertOut(rank, this.layout.rows, this.config.hidden, expertOut);
    const sent = combineSend(this.ctx(rank), rank, expertOut);
    this.recorder.record(rank, this.phases.step(rank), "combineSend", sent);
    this.phases.advance(rank, "combineSend");
  }

  async combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array> {
    this.enter(rank, "combineRecv");
    const input = this.inputs[rank]!;
    const weights = takeCombineWeights(this.config, rank, tokensOf(this.config, input), topkWeights);
    const { y, received } = combineRecv(this.ctx(rank), rank, input, weights);
    this.recorder.record(rank, this.phases.step(rank), "combineRecv", received);
    this.phases.advance(rank, "combineRecv");
    return y;
  }

  /** Rows and bytes per peer of the rank's latest step; wait times are null (the simulation never waits). */
  async stats(rank: number): Promise<StepStats> {
    if (this.destroyed) throw new DestroyedError("reference session");
    validateRank(this.config, rank);
    return this.recorder.get(rank);
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    this.heaps.length = 0;
    this.pending = [];
  }
}
