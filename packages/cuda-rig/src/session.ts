import {
  computeLayout,
  DEFAULT_TIMEOUT_MS,
  DestroyedError,
  type DispatchInput,
  type DispatchResult,
  type EpConfig,
  type Layout,
  PhaseTracker,
  type Session,
  type StepStats,
  takeCombineWeights,
  takeRankInput,
  tokensOf,
  validateExpertOut,
  validateRank,
} from "@switchyard/core";
import type { OutputMode } from "@switchyard/cuda";
import type { WorkerGroup } from "./launcher.js";
import { releaseGroup } from "./pool.js";
import { RankQueue } from "./rankQueue.js";
import { SessionStats } from "./sessionStats.js";
import type { WithStats } from "./worker/rankState.js";

let nextSession = 1;

/** Slack on top of the device-side timeout before the launcher gives up on a worker's answer. */
const IPC_SLACK_MS = 60_000;
/** Slack on top of the device-side timeout for the closing of a session that timed out. */
const RECOVER_SLACK_MS = 10_000;

/**
 * Errors after which every worker is still alive and its GPU usable: a receive stage that gave up
 * waiting (TimeoutError) or saw a bad signal (ProtocolError). Every device wait is bounded, so each
 * worker finishes what it had queued; closing the endpoint then synchronises the device and frees
 * the symmetric heap collectively, and the next endpoint starts zeroed behind a barrier.
 */
const RECOVERABLE = new Set(["TimeoutError", "ProtocolError"]);

export interface CudaSessionOptions {
  /** Ask the workers for the kernels' per-peer counters and wait stamps. */
  stats?: boolean;
  /** Each rank's endpoint output mode (RankEndpoint's `output`); default worst-case. */
  output?: OutputMode;
  /** Where the workers go on destroy (default: back to the pool, or closed if they cannot be reused). */
  release?: (group: WorkerGroup, healthy: boolean) => Promise<void>;
}

/**
 * The world-level session core's interface describes, over one worker process per rank: every
 * call is checked here (rank, phase order, inputs) before anything moves, then forwarded to the
 * rank's worker, which runs the phase on its GPU. The group may have more workers than the config
 * has ranks (one NVSHMEM world over every GPU): they join opening and closing only. A receive stage's TimeoutError / ProtocolError
 * and a worker's exit fail the session: later calls rethrow that error; destroy() reuses the workers
 * when they all close their endpoints in time, and closes them otherwise.
 * `stats(rank)` keeps answering after a failure (the counters live here, in the launcher's process).
 */
export class CudaSession implements Session {
  readonly layout: Layout;
  private readonly phases: PhaseTracker;
  private readonly id = nextSession++;
  private destroyed = false;
  private broken: Error | null = null;
  private readonly ipcTimeoutMs: number;
  private readonly recorder: SessionStats;
  /** A rank's calls run one after another: a second call waits for the first's phase to advance. */
  private readonly queue: RankQueue;

  private constructor(
    readonly config: Readonly<EpConfig>,
    private readonly group: WorkerGroup,
    readonly timeoutMs: number,
    private readonly options: CudaSessionOptions,
  ) {
    this.layout = computeLayout(config);
    this.phases = new PhaseTracker(config.ranks);
    this.recorder = new SessionStats(config);
    this.queue = new RankQueue(config.ranks);
    this.ipcTimeoutMs = timeoutMs + IPC_SLACK_MS;
    group.onFailure((e) => {
      this.broken ??= e;
    });
  }

  /** Opens the endpoint on every worker (collective). */
  static async open(
    config: Readonly<EpConfig>,
    group: WorkerGroup,
    timeoutMs = DEFAULT_TIMEOUT_MS,
    options: CudaSessionOptions = {},
  ): Promise<CudaSession> {
    const s = new CudaSession(config, group, timeoutMs, options);
    const stats = options.stats === true;
    const output = options.output;
    await group.all(
      "open",
      () => ({ session: s.id, config, timeoutMs, stats, output }),
      s.ipcTimeoutMs + 60_000,
    );
    return s;
  }

  private enter(rank: number): void {
    if (this.destroyed) throw new DestroyedError("cuda session");
    validateRank(this.config, rank);
    if (this.broken) throw this.broken;
  }

  private async forward<T>(rank: number, op: string, args: Record<string, unknown> = {}): Promise<T> {
    try {
      return await this.group.call<T>(rank, op, { session: this.id, ...args }, this.ipcTimeoutMs);
    } catch (e) {
      const name = (e as Error).name;
      if (name !== "InputError" && name !== "PhaseError") this.broken ??= e as Error;
      throw e;
    }
  }

  /** Tokens each rank dispatched in its latest step (combineRecv's weights are checked against them). */
  private readonly tokens = new Map<number, number>();

  async dispatchSend(rank: number, input: DispatchInput): Promise<void> {
    this.enter(rank);
    // Checked and copied when the call is made; the copy is what the worker gets.
    const kept = takeRankInput(this.config, rank, input).input;
    this.tokens.set(rank, tokensOf(this.config, kept));
    return this.queue.run(rank, async () => {
      this.enter(rank);
      this.phases.check(rank, "dispatchSend");
      await this.forward(rank, "dispatchSend", { input: kept });
      this.recorder.dispatchSend(rank, this.phases.step(rank), kept.topkIdx);
      this.phases.advance(rank, "dispatchSend");
    });
  }

  async dispatchRecv(rank: number): Promise<DispatchResult> {
    this.enter(rank);
    return this.queue.run(rank, async () => {
      this.enter(rank);
      this.phases.check(rank, "dispatchRecv");
      const r = await this.forward<WithStats<DispatchResult>>(rank, "dispatchRecv");
      this.recorder.dispatchRecv(rank, r.value.sourceCounts, r.stats);
      this.phases.advance(rank, "dispatchRecv");
      return r.value;
    });
  }

  async combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
    this.enter(rank);
    return this.queue.run(rank, async () => {
      this.enter(rank);
      this.phases.check(rank, "combineSend");
      validateExpertOut(rank, this.layout.rows, this.config.hidden, expertOut);
      await this.forward(rank, "combineSend", { expertOut });
      this.recorder.combineSend(rank);
      this.phases.advance(rank, "combineSend");
    });
  }

  async combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array> {
    this.enter(rank);
    // Weights at home: copied now, checked in turn (after the phase order, as core checks them;
    // none in the default mode, where dispatch carried them).
    const given = topkWeights instanceof Float32Array ? topkWeights.slice() : topkWeights;
    return this.queue.run(rank, async () => {
      this.enter(rank);
      this.phases.check(rank, "combineRecv");
      const weights = takeCombineWeights(this.config, rank, this.tokens.get(rank) ?? 0, given);
      const r = await this.forward<WithStats<Uint16Array>>(rank, "combineRecv", weights ? { weights } : {});
      this.recorder.combineRecv(rank, r.stats);
      this.phases.advance(rank, "combineRecv");
      return r.value;
    });
  }

  /**
   * This rank's counters for its latest step (rows and bytes per peer of each completed call; with
   * stats on, the kernels' wait per peer). Moves nothing; answers after a failure too.
   */
  async stats(rank: number): Promise<StepStats> {
    if (this.destroyed) throw new DestroyedError("cuda session");
    validateRank(this.config, rank);
    return this.recorder.get(rank);
  }

  /**
   * Frees every rank's endpoint (collective) and hands the workers back to the pool. After a receive
   * stage's TimeoutError / ProtocolError the workers are still alive, so the same collective close
   * is tried, bounded by the timeout plus 10 s: if every worker answers, the group goes back to the
   * pool too (the next session skips starting a world, ~3 s). A worker exit, an unanswered request
   * or a failed close closes the workers instead: the next session starts a fresh NVSHMEM world.
   */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const recoverable = this.broken === null || RECOVERABLE.has(this.broken.name);
    let healthy = recoverable && this.group.failure === null;
    if (healthy) {
      const limit = this.broken === null ? this.ipcTimeoutMs : this.timeoutMs + RECOVER_SLACK_MS;
      try {
        await this.group.all("close", () => ({ session: this.id }), limit);
      } catch {
        healthy = false;
      }
    }
    await (this.options.release ?? releaseGroup)(this.group, healthy && this.group.failure === null);
  }
}
