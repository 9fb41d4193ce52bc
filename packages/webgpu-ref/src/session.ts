import {
  DEFAULT_TIMEOUT_MS,
  DestroyedError,
  type DispatchInput,
  type DispatchResult,
  type EpConfig,
  epochOfStep,
  type Layout,
  PhaseTracker,
  type RegionName,
  type Session,
  type SessionOptions,
  type StepStats,
  statsPosition,
  takeCombineWeights,
  takeRankInput,
  validateConfig,
  validateExpertOut,
  validateRank,
} from "@switchyard/core";
import { acquireDevice } from "./device.js";
import { checkOptions } from "./options.js";
import { planSession, type SessionPlan } from "./plan.js";
import { Resources } from "./resources.js";
import { kernelsFor } from "./shaders.js";
import { combineRecv } from "./stages/combineRecv.js";
import { combineSend } from "./stages/combineSend.js";
import type { Delivered, StageContext } from "./stages/context.js";
import { dispatchRecv } from "./stages/dispatchRecv.js";
import { dispatchSend } from "./stages/dispatchSend.js";
import { dispatchWrite, type PendingSend } from "./stages/dispatchWrite.js";
import { readStats } from "./stats.js";
import { Engine, Submission } from "./submission.js";
import { watchdog } from "./watchdog.js";

export interface WebGpuSessionOptions extends SessionOptions {
  /**
   * Caps the bytes one storage binding covers (default: the device's maxStorageBufferBindingSize).
   * Heaps larger than this are bound as overlapping windows; a small cap exercises that path.
   */
  maxBindingBytes?: number;
  /**
   * Longest wait for the WebGPU implementation (GPU work, an error scope, the queue drain) before a
   * call fails with a WebGpuError of kind "timeout" (default: timeoutMs, at least 60 s).
   */
  watchdogMs?: number;
}

/**
 * A copy of combineRecv's weights made when the call is made, so the caller may reuse its array at
 * once: a genuine Float32Array (a subclass too) is copied from its internal slots; anything else
 * (a Proxy, a detached buffer, another type) is kept as it is for takeCombineWeights to refuse.
 */
function holdWeights(w: unknown): unknown {
  if (!ArrayBuffer.isView(w) || !(w instanceof Float32Array)) return w;
  try {
    return new Float32Array(w);
  } catch {
    return w;
  }
}

/** The GPU's work never takes longer than this before a call fails (ms), whatever timeoutMs says. */
const MIN_WATCHDOG_MS = 60_000;

/**
 * All ranks of one config on one WebGPU device. Calls run one at a time in the order they are
 * made (each waits for the previous), each as its own queue submission, so the caller interleaves
 * ranks freely; bad input and out-of-order calls are refused before anything is uploaded.
 * combineSend reads `expertOut` when it runs: keep the array unchanged until its promise settles.
 */
export class WebGpuSession implements Session {
  readonly layout: Layout;
  private readonly phases: PhaseTracker;
  private readonly tokens: number[];
  private readonly delivered: (Delivered | null)[];
  /** Contiguous senders whose counts went out and whose rows wait for every rank's counts. */
  private pending: PendingSend[] = [];
  /** The epoch of each rank's latest count announcement (contiguous), 0 before its first. */
  private readonly announced: number[];
  /** Set once a test hook wrote into a heap: from then on only the GPU knows which counts are there. */
  private hooked = false;
  private chain: Promise<unknown> = Promise.resolve();
  private destroyed = false;

  private constructor(
    readonly config: Readonly<EpConfig>,
    private readonly ctx: StageContext,
  ) {
    this.layout = ctx.plan.layout;
    this.phases = new PhaseTracker(config.ranks);
    this.tokens = new Array(config.ranks).fill(0);
    this.delivered = new Array(config.ranks).fill(null);
    this.announced = new Array(config.ranks).fill(0);
  }

  static async create(config: EpConfig, options: WebGpuSessionOptions = {}): Promise<WebGpuSession> {
    validateConfig(config);
    checkOptions(config);
    const frozen = Object.freeze({ ...config });
    const handle = await acquireDevice();
    const limits = handle.device.limits;
    const plan: SessionPlan = planSession(frozen, limits, options.maxBindingBytes);
    const kernels = await kernelsFor(handle, plan.names);
    const res = await Resources.create(handle, plan);
    const bound = options.watchdogMs ?? Math.max(MIN_WATCHDOG_MS, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const engine = new Engine(handle, kernels, res.params, res.readback, bound);
    return new WebGpuSession(frozen, { plan, res, engine });
  }

  /** Runs `fn` after every earlier call of this session has settled. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(() => {
      if (this.destroyed) throw new DestroyedError("webgpu session");
      return fn();
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private epoch(rank: number): number {
    return epochOfStep(this.phases.step(rank));
  }

  dispatchSend(rank: number, input: DispatchInput): Promise<void> {
    // Like the reference: the input is checked and copied when the call is made, so the caller
    // may reuse its arrays at once; the work runs after the calls made before it.
    let T: number;
    let kept: DispatchInput;
    try {
      if (this.destroyed) throw new DestroyedError("webgpu session");
      ({ input: kept, tokens: T } = takeRankInput(this.config, rank, input));
    } catch (e) {
      return Promise.reject(e);
    }
    return this.serial(async () => {
      this.phases.check(rank, "dispatchSend");
      const epoch = this.epoch(rank);
      await dispatchSend(this.ctx, rank, kept, T, epoch);
      this.tokens[rank] = T;
      if (this.config.layout === "contiguous") {
        this.announced[rank] = epoch;
        this.pending = [...this.pending.filter((p) => p.src !== rank), { src: rank, epoch }];
      }
      this.phases.advance(rank, "dispatchSend");
      await this.progress();
    });
  }

  /**
   * Runs the contiguous senders whose wait is over, as core's reference does after every
   * dispatchSend and before every dispatchRecv: on a GPU each would wait in its kernel until
   * every rank's counts arrived; here its continuation runs once they are all there.
   */
  private async progress(): Promise<void> {
    const now = this.pending.map((p) => ({ src: p.src, epoch: this.epoch(p.src) }));
    // Every rank announces to every heap, so (without test hooks) a sender's counts are all there
    // exactly when every rank's latest announcement carries its epoch; only those are tried.
    const ready = now.filter((p) => this.hooked || this.announced.every((e) => e === p.epoch));
    const waiting = new Set((await dispatchWrite(this.ctx, ready)).map((p) => p.src));
    this.pending = now.filter((p) => waiting.has(p.src) || !ready.includes(p));
  }

  dispatchRecv(rank: number): Promise<DispatchResult> {
    return this.serial(async () => {
      validateRank(this.config, rank);
      this.phases.check(rank, "dispatchRecv");
      await this.progress();
      const { result, delivered } = await dispatchRecv(this.ctx, rank, this.epoch(rank));
      this.delivered[rank] = delivered;
      this.phases.advance(rank, "dispatchRecv");
      return result;
    });
  }

  combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
    return this.serial(async () => {
      validateRank(this.config, rank);
      this.phases.check(rank, "combineSend");
      validateExpertOut(rank, this.layout.rows, this.config.hidden, expertOut);
      await combineSend(this.ctx, rank, expertOut, this.delivered[rank]!, this.epoch(rank));
      this.phases.advance(rank, "combineSend");
    });
  }

  /**
   * With combineWeights home `topkWeights` (fp32 [T, K]) are required and copied when the call is
   * made; they are checked (core's takeCombineWeights) once the call's turn comes, after the phase.
   */
  combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array> {
    const held = holdWeights(topkWeights);
    return this.serial(async () => {
      validateRank(this.config, rank);
      this.phases.check(rank, "combineRecv");
      const weights = takeCombineWeights(this.config, rank, this.tokens[rank], held);
      const y = await combineRecv(this.ctx, rank, this.tokens[rank], this.epoch(rank), weights);
      this.phases.advance(rank, "combineRecv");
      return y;
    });
  }

  /** Rows and bytes per peer of the rank's latest step, read back from the GPU; wait times are null (see stats.ts). */
  stats(rank: number): Promise<StepStats> {
    return this.serial(async () => {
      validateRank(this.config, rank);
      const at = statsPosition(this.phases.phase(rank), this.phases.step(rank));
      return readStats(this.ctx, rank, at, this.delivered[rank]);
    });
  }

  /**
   * Frees the session's buffers, then flushes the queue: Dawn retires destroyed buffers (and the
   * parameter upload a session that never ran a step leaves pending) only as the queue moves, so
   * sessions created and destroyed without work would otherwise pile up native memory.
   */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.chain;
    this.ctx.engine.destroy();
    this.ctx.res.destroy();
    const { handle } = this.ctx.engine;
    if (handle.lost) return;
    handle.device.queue.submit([]);
    const ms = this.ctx.engine.watchdogMs;
    await watchdog(
      handle.device.queue.onSubmittedWorkDone(),
      ms,
      "destroy",
      "the queue drain (onSubmittedWorkDone)",
    );
  }

  // ---- test hooks (not exported from the package root; see testing.ts) ----

  /** Overwrites u32 word `index` of `region` on `rank`'s heap (or local buffer), between calls. */
  corruptWord(rank: number, region: RegionName, index: number, word: number): Promise<void> {
    return this.serial(async () => {
      this.hooked = true;
      const sub = new Submission(this.ctx.engine, `corruptWord(rank ${rank}, ${region}[${index}])`);
      sub.write(this.regionBuffer(rank, region), this.wordAddress(region, index), Uint32Array.of(word >>> 0));
      await sub.run();
    });
  }

  /** Reads u32 word `index` of `region` on `rank`'s heap (or local buffer). */
  readWord(rank: number, region: RegionName, index: number): Promise<number> {
    return this.serial(async () => {
      const sub = new Submission(this.ctx.engine, `readWord(rank ${rank}, ${region}[${index}])`);
      sub.read(this.regionBuffer(rank, region), this.wordAddress(region, index), 4);
      const [b] = await sub.run();
      return new Uint32Array(b.buffer, b.byteOffset, 1)[0];
    });
  }

  /** A copy of `rank`'s symmetric heap and local buffer, byte for byte as core's RankHeap lays them out. */
  readHeap(rank: number): Promise<{ symmetric: ArrayBuffer; local: ArrayBuffer }> {
    return this.serial(async () => {
      const res = this.ctx.res;
      const sym = this.layout.symmetricBytes;
      const loc = this.layout.localBytes;
      const chunk = res.readback.size;
      const read = async (buffer: GPUBuffer, bytes: number) => {
        const out = new Uint8Array(bytes);
        for (let at = 0; at < bytes; at += chunk) {
          const sub = new Submission(this.ctx.engine, `readHeap(rank ${rank})`);
          sub.read(buffer, at, Math.min(chunk, bytes - at));
          const [b] = await sub.run();
          out.set(b, at);
        }
        return out.buffer;
      };
      return { symmetric: await read(res.heaps[rank], sym), local: await read(res.locals[rank], loc) };
    });
  }

  private regionBuffer(rank: number, region: RegionName): GPUBuffer {
    validateRank(this.config, rank);
    const r = this.layout.regions[region];
    return r.symmetric ? this.ctx.res.heaps[rank] : this.ctx.res.locals[rank];
  }

  private wordAddress(region: RegionName, index: number): number {
    const r = this.layout.regions[region];
    if (!Number.isInteger(index) || index < 0 || (index + 1) * 4 > r.bytes) {
      throw new RangeError(`word ${index} is outside region ${region} (${r.bytes} bytes)`);
    }
    return r.offset + index * 4;
  }

  /** The plan (buffer sizes, windows) behind this session. */
  get plan(): SessionPlan {
    return this.ctx.plan;
  }
}
