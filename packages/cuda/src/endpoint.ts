import {
  alignUp,
  combineWeightsOf,
  computeLayout,
  DEFAULT_TIMEOUT_MS,
  DestroyedError,
  type DispatchResult,
  dtypeBytes,
  type EpConfig,
  InputError,
  type Layout,
  localExperts,
  PhaseError,
  REGION_NAMES,
  type RegionName,
  scalesPerRow,
  UnsupportedError,
  validateConfig,
} from "@switchyard/core";
import { mapNativeError } from "./errors.js";
import { checkLayout } from "./features.js";
import type { NativeAddon, NativeEndpoint } from "./native/types.js";
import { checkOptions } from "./options.js";
import { type OutputMode, outputModeFor } from "./output.js";
import { packParams } from "./params.js";
import type { CudaRuntime } from "./runtime.js";

/** A device address with its size in bytes where known (a DeviceTensor, a region, or a raw pointer). */
export interface DeviceRef {
  readonly ptr: bigint;
  /** Size in bytes; NaN where unknown (external pointers). */
  readonly bytes: number;
}

/** A raw device address (bigint) or something that has one. */
export type DeviceAddress = bigint | DeviceRef;

export interface DispatchSendArgs {
  /** [T, hidden] in the input dtype. */
  x: DeviceAddress;
  /** [T, hidden / 128] fp32, fp8 input only. */
  scales?: DeviceAddress;
  /** [T, topK] int32. */
  topkIdx: DeviceAddress;
  /** [T, topK] fp32: the router weights, carried to the expert ranks in the route records; none (left out) with weights at home. */
  topkWeights?: DeviceAddress;
  numTokens: number;
}

export interface CombineRecvArgs {
  /** [T, topK] int32, as passed to dispatchSend. */
  topkIdx: DeviceAddress;
  /** [T, topK] fp32: with weights at home (`combineWeights` `home`) the weights of this rank's sums, required; otherwise not read (the weights went with dispatch). */
  topkWeights?: DeviceAddress;
  numTokens: number;
  /** [T, hidden] bf16 output. */
  y: DeviceAddress;
}

/**
 * Per-peer counters of an endpoint's latest step (`enableStats` first), index = peer rank, this
 * rank included: rows as the stage kernels counted them, waits as the receive kernels stamped
 * them (%globaltimer from the kernel's start to the arrival of the peer's last signal; a peer that
 * never arrived shows the time waited until the receive gave up).
 */
export interface EndpointStats {
  dispatchSent: number[];
  dispatchReceived: number[];
  combineSent: number[];
  combineReceived: number[];
  dispatchWaitMs: number[];
  combineWaitMs: number[];
}

export interface EndpointOptions {
  /** Every receive wait fails with TimeoutError after this long (default 10 s). */
  timeoutMs?: number;
  /**
   * Contiguous layout: "worst-case" (default) leaves the rows in the endpoint's symmetric recvX /
   * recvScales of the layout's N rows, graph-capturable; "exact" also copies them into the caller's
   * buffers of the step's rows (`dispatchRecvRows`, then `dispatchRecvInto`), one host
   * synchronisation a step. In protocol version 2 this saves no memory (senders write the symmetric
   * recvX). Default "worst-case"; the library reads no environment (output.ts).
   */
  output?: OutputMode;
}

/** Exact output: where dispatchRecvInto places the step's rows. */
export interface RecvIntoArgs {
  /** [rows, hidden] in the dispatch dtype (rows from dispatchRecvRows). */
  x: DeviceAddress;
  /** [rows, hidden / 128] fp32, fp8 dispatch only. */
  scales?: DeviceAddress;
}

function ref(a: DeviceAddress): DeviceRef {
  return typeof a === "bigint" ? { ptr: a, bytes: Number.NaN } : a;
}

/**
 * One rank's endpoint for one config: the symmetric heap laid out by core's layout, and the four
 * phases on a CUDA stream. Phases only enqueue work (no host synchronisation, so a step can be
 * captured in a CUDA graph); `synchronize` waits and turns a receive stage's failure into
 * TimeoutError / ProtocolError. Creating and destroying are collective over the world.
 */
export class RankEndpoint {
  readonly layout: Layout;
  readonly rank: number;
  readonly timeoutMs: number;
  /** This runtime rank is past the config's ranks: it only joins the collective create / destroy. */
  readonly bystander: boolean;
  /** Contiguous output mode (EndpointOptions.output). */
  readonly output: OutputMode;
  private destroyed = false;
  /** Exact output: the current step's rows, once dispatchRecvRows returned them. */
  private stepRows: number | null = null;

  private constructor(
    readonly config: Readonly<EpConfig>,
    readonly native: NativeEndpoint,
    readonly addon: NativeAddon,
    rank: number,
    timeoutMs: number,
    layout: Layout = computeLayout(config),
    output: OutputMode = "worst-case",
  ) {
    this.layout = layout;
    this.output = output;
    this.rank = rank;
    this.timeoutMs = timeoutMs;
    this.bystander = rank >= config.ranks;
  }

  /**
   * Collective: every rank of the runtime creates its endpoint for the same config. The config may
   * have fewer ranks than the runtime: config rank r is runtime rank r, and runtime ranks past the
   * config's are bystanders (`bystander`), which join creation and destruction only.
   */
  static create(
    runtime: CudaRuntime,
    config: Readonly<EpConfig>,
    options: EndpointOptions = {},
  ): RankEndpoint {
    validateConfig(config);
    checkLayout(config.layout);
    checkOptions(config);
    if (config.ranks !== runtime.ranks) {
      throw new InputError(
        runtime.rank,
        "config.ranks",
        `${config.ranks}, but the runtime has ${runtime.ranks} ranks`,
      );
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new RangeError(`RankEndpoint.create: timeoutMs ${timeoutMs} must be > 0`);
    const layout = computeLayout(config);
    const output = outputModeFor(config, options.output);
    try {
      const native = new runtime.addon.Endpoint(
        runtime.native,
        packParams(layout),
        BigInt(layout.symmetricBytes),
        BigInt(Math.round(timeoutMs * 1e6)),
      );
      if (output === "exact") native.setOutput(true);
      return new RankEndpoint(config, native, runtime.addon, runtime.rank, timeoutMs, layout, output);
    } catch (e) {
      throw mapNativeError(e, runtime.rank, timeoutMs, config.experts, { call: "create" });
    }
  }

  /** For tests and other transports: wraps an existing native endpoint. */
  static wrap(
    config: Readonly<EpConfig>,
    native: NativeEndpoint,
    addon: NativeAddon,
    rank: number,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ): RankEndpoint {
    return new RankEndpoint(config, native, addon, rank, timeoutMs);
  }

  private live(): void {
    if (this.destroyed) throw new DestroyedError(`cuda endpoint (rank ${this.rank})`);
  }

  /** Runs a native call of `name`; what it throws becomes core's named error (`mapped`). */
  private call<T>(name: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw this.mapped(e, name);
    }
  }

  /**
   * What a native call of `name` threw, as core's named error (mapNativeError). A call that came
   * back after destroy() (one in flight, or one after an await) reads a state error as DestroyedError.
   */
  private mapped(e: unknown, name: string): Error {
    return mapNativeError(e, this.rank, this.timeoutMs, this.config.experts, {
      call: name,
      destroyed: this.destroyed,
    });
  }

  private tokens(n: number, what: string): void {
    if (!Number.isInteger(n) || n < 0 || n > this.config.maxTokensPerRank) {
      throw new InputError(
        this.rank,
        what,
        `numTokens ${n} is outside [0, maxTokensPerRank = ${this.config.maxTokensPerRank}]`,
      );
    }
  }

  private sized(a: DeviceAddress | undefined, name: string, bytes: number, required: boolean): bigint {
    if (a === undefined || a === null) {
      if (required) throw new InputError(this.rank, name, "is missing");
      return 0n;
    }
    const r = ref(a);
    if (typeof r.ptr !== "bigint") throw new InputError(this.rank, name, "must be a bigint device address");
    if (required && r.ptr === 0n) throw new InputError(this.rank, name, "is a null device address");
    if (r.bytes < bytes) throw new InputError(this.rank, name, `holds ${r.bytes} bytes, needs ${bytes}`);
    return r.ptr;
  }

  private notExact(call: string): UnsupportedError {
    return new UnsupportedError(
      "cuda",
      `${call} on rank ${this.rank}'s endpoint: its output is worst-case (dispatchRecv places the rows in recvX); create the endpoint with { output: "exact" }`,
    );
  }

  /** Device address and size of a layout region in this rank's heap. */
  region(name: RegionName): DeviceRef {
    this.live();
    const r = this.call("region", () => this.native.region(REGION_NAMES.indexOf(name)));
    return { ptr: r.ptr, bytes: r.bytes };
  }

  /**
   * Sends this rank's tokens: enqueued on `stream`; the host never waits. The contiguous layout's
   * kernel waits on the device (bounded by the timeout) for every rank's counts of the step.
   */
  dispatchSend(args: DispatchSendArgs, stream = 0n): void {
    const [x, scales, idx, w, T] = this.sendArgs(args, "dispatchSend");
    this.call("dispatchSend", () => this.native.dispatchSend(x, scales, idx, w, T, stream));
  }

  /**
   * dispatchSend then dispatchRecv in one call (the same checks): the masked layout runs both
   * halves as one kernel launch, the contiguous layout launches its two kernels. Enqueued on `stream`.
   */
  dispatch(args: DispatchSendArgs, stream = 0n): void {
    const [x, scales, idx, w, T] = this.sendArgs(args, "dispatch");
    this.stepRows = null;
    this.call("dispatch", () => this.native.dispatch(x, scales, idx, w, T, stream));
  }

  /** dispatchSend's checked addresses: x, scales, topkIdx, topkWeights, and T. */
  private sendArgs(args: DispatchSendArgs, call: string): [bigint, bigint, bigint, bigint, number] {
    this.live();
    const c = this.config;
    const T = args.numTokens;
    this.tokens(T, call);
    const need = T > 0;
    const x = this.sized(args.x, "x", T * c.hidden * dtypeBytes(c.inputDtype), need);
    const S = scalesPerRow(c, c.inputDtype);
    if (S === 0 && args.scales !== undefined) {
      throw new InputError(this.rank, "scales", "given, but inputDtype is bf16");
    }
    const scales = this.sized(args.scales, "scales", T * S * 4, need && S > 0);
    const idx = this.sized(args.topkIdx, "topkIdx", T * c.topK * 4, need);
    const home = combineWeightsOf(c) === "home";
    if (home && args.topkWeights !== undefined) {
      throw new InputError(
        this.rank,
        "topkWeights",
        'given to dispatchSend, but combineWeights is "home": pass the weights to combineRecv and leave them out here',
      );
    }
    const w = this.sized(args.topkWeights, "topkWeights", T * c.topK * 4, need && !home);
    return [x, scales, idx, w, T];
  }

  /**
   * Waits (on the device) for every source; counts land in device memory. Enqueued on `stream`.
   * Worst-case output: also places the rows in recvX. Exact output: `dispatchRecvRows` and
   * `dispatchRecvInto` follow.
   */
  dispatchRecv(stream = 0n): void {
    this.live();
    this.stepRows = null;
    this.call("dispatchRecv", () => this.native.dispatchRecv(stream));
  }

  /**
   * Exact output: waits for `stream` (a receive's failure rejects with TimeoutError /
   * ProtocolError) and resolves to the step's rows, padding included: the size of the buffers
   * `dispatchRecvInto` takes and of combineSend's expertOut.
   */
  async dispatchRecvRows(stream = 0n): Promise<number> {
    this.live();
    if (this.output !== "exact") throw this.notExact("dispatchRecvRows");
    let rows: number;
    try {
      rows = await this.native.recvRows(stream);
    } catch (e) {
      throw this.mapped(e, "dispatchRecvRows");
    }
    this.stepRows = rows;
    return rows;
  }

  /** Exact output: copies the step's rows into the caller's buffers. Enqueued on `stream`. */
  dispatchRecvInto(args: RecvIntoArgs, stream = 0n): void {
    this.live();
    if (this.output !== "exact") throw this.notExact("dispatchRecvInto");
    const rows = this.stepRows;
    if (rows === null)
      throw new PhaseError(
        this.rank,
        "dispatchRecvInto",
        "call dispatchRecvRows after dispatchRecv first (it says how many rows the buffers need)",
      );
    const c = this.config;
    const S = scalesPerRow(c, c.dispatchDtype);
    if (S === 0 && args.scales !== undefined) {
      throw new InputError(this.rank, "scales", "given, but dispatchDtype is bf16");
    }
    const x = this.sized(args.x, "x", rows * c.hidden * dtypeBytes(c.dispatchDtype), rows > 0);
    const scales = this.sized(args.scales, "scales", rows * S * 4, rows > 0 && S > 0);
    this.call("dispatchRecvInto", () => this.native.recvInto(x, scales, stream));
  }

  /** Sends expert outputs [rows, hidden] bf16 back home (rows: the layout's, or the step's with exact output). Enqueued on `stream`. */
  combineSend(expertOut: DeviceAddress, stream = 0n): void {
    const out = this.expertOutArg(expertOut);
    this.call("combineSend", () => this.native.combineSend(out, stream));
  }

  /** combineSend then combineRecv in one call (the same checks), one kernel launch. Enqueued on `stream`. */
  combine(expertOut: DeviceAddress, args: CombineRecvArgs, stream = 0n): void {
    const out = this.expertOutArg(expertOut);
    const [idx, w, T, y] = this.recvArgs(args, "combine");
    this.call("combine", () => this.native.combine(out, idx, w, T, y, stream));
  }

  private expertOutArg(expertOut: DeviceAddress): bigint {
    this.live();
    const rows = this.output === "exact" ? (this.stepRows ?? 0) : this.layout.rows;
    return this.sized(expertOut, "expertOut", rows * this.config.hidden * 2, rows > 0);
  }

  /** Waits for every expert rank and writes y [T, hidden] bf16. Enqueued on `stream`. */
  combineRecv(args: CombineRecvArgs, stream = 0n): void {
    const [idx, w, T, y] = this.recvArgs(args, "combineRecv");
    this.call("combineRecv", () => this.native.combineRecv(idx, w, T, y, stream));
  }

  /** combineRecv's checked addresses: topkIdx, topkWeights, T, y. */
  private recvArgs(args: CombineRecvArgs, call: string): [bigint, bigint, number, bigint] {
    this.live();
    const c = this.config;
    const T = args.numTokens;
    this.tokens(T, call);
    const need = T > 0;
    const idx = this.sized(args.topkIdx, "topkIdx", T * c.topK * 4, need);
    // Weights at home: required, the weights of this rank's sums; otherwise not read.
    const w = this.sized(
      args.topkWeights,
      "topkWeights",
      T * c.topK * 4,
      need && combineWeightsOf(c) === "home",
    );
    const y = this.sized(args.y, "y", T * c.hidden * 2, need);
    return [idx, w, T, y];
  }

  /** Waits for `stream`; rejects with TimeoutError / ProtocolError if a receive stage failed. */
  async synchronize(stream = 0n): Promise<void> {
    this.live();
    try {
      await this.native.check(stream);
    } catch (e) {
      throw this.mapped(e, "synchronize");
    }
  }

  /**
   * The SM budget of the endpoint's kernels. Contiguous layout: grid size of its copy kernels
   * (default the runtime option contiguousBlocks, or 24; the dispatch send's blocks wait for one
   * another, so its grid stays within one wave). Masked layout: the SMs its grids may use
   * (default and most: one wave over every SM, shared by the ranks on the GPU).
   */
  setBlocks(blocks: number): void {
    this.live();
    if (!Number.isInteger(blocks) || blocks < 1)
      throw new RangeError(`setBlocks: blocks ${blocks} must be >= 1`);
    this.call("setBlocks", () => this.native.setBlocks(blocks));
  }

  /** Device memory this endpoint allocated: all of it, and the local output buffers (contiguous). */
  memory(): { deviceBytes: number; localBytes: number } {
    this.live();
    return this.call("memory", () => this.native.memory());
  }

  /**
   * Turns the per-peer counters on (`readStats`): one small device allocation the stage kernels
   * stamp. Enable before capturing a graph (a captured step keeps what it saw). Idempotent.
   */
  enableStats(): void {
    this.live();
    this.call("enableStats", () => this.native.enableStats());
  }

  /** The latest step's per-peer counters (synchronizes `stream` first); also after a failed step. */
  readStats(stream = 0n): EndpointStats {
    this.live();
    const s = this.call("readStats", () => this.native.stats(this.config.ranks, stream));
    return {
      dispatchSent: s.dispatchSent,
      dispatchReceived: s.dispatchReceived,
      combineSent: s.combineSent,
      combineReceived: s.combineReceived,
      dispatchWaitMs: s.dispatchWaitNs.map((ns) => ns / 1e6),
      combineWaitMs: s.combineWaitNs.map((ns) => ns / 1e6),
    };
  }

  /** Per (local expert, source) row counts [L, R] of the last dispatchRecv (synchronizes `stream` first). */
  async readCounts(stream = 0n): Promise<Int32Array> {
    await this.synchronize(stream);
    const counts = new Int32Array(localExperts(this.config) * this.config.ranks);
    this.addon.copyToHost(
      counts,
      this.call("readCounts", () => this.native.counts()),
    );
    return counts;
  }

  /**
   * Host copy of what the last dispatchRecv delivered (synchronizes `stream` first), as core's
   * DispatchResult of the layout's rows. Exact output: pass the buffers given to dispatchRecvInto;
   * rows past the step's are zero.
   */
  async readDispatch(stream = 0n, placed?: RecvIntoArgs): Promise<DispatchResult> {
    const sourceCounts = await this.readCounts(stream);
    const c = this.config;
    if (this.output !== "exact")
      return readDispatchResult(c, sourceCounts, (name) => this.region(name), this.addon);
    const rows = this.stepRows;
    if (placed === undefined || rows === null)
      throw new PhaseError(
        this.rank,
        "readDispatch",
        "exact output: call dispatchRecvRows and dispatchRecvInto first, and pass readDispatch the same buffers",
      );
    const S = scalesPerRow(c, c.dispatchDtype);
    const region = (name: RegionName): DeviceRef => {
      if (name === "recvX")
        return { ptr: ref(placed.x).ptr, bytes: rows * c.hidden * dtypeBytes(c.dispatchDtype) };
      if (name === "recvScales")
        return { ptr: placed.scales ? ref(placed.scales).ptr : 0n, bytes: rows * S * 4 };
      return this.region(name);
    };
    return readDispatchResult(c, sourceCounts, region, this.addon, this.layout.rows);
  }

  /** Frees the heap (collective). Later calls throw DestroyedError. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    try {
      this.native.destroy();
    } catch (e) {
      // Its own refusal (calls still running) is no use-after-destroy: mapped as a live call's.
      throw mapNativeError(e, this.rank, this.timeoutMs, this.config.experts, { call: "destroy" });
    }
  }
}

/**
 * A DispatchResult from device regions recvX / recvScales / recvMeta: masked, expert e's rows
 * packed at e * R * M; contiguous, expert offsets are the counts' padded prefix sums (what
 * dispatch recv laid out). With `rows`, x and scales hold that many rows, the regions' bytes
 * first and zeros after (exact output's buffers are smaller).
 */
export function readDispatchResult(
  c: Readonly<EpConfig>,
  sourceCounts: Int32Array,
  region: (name: RegionName) => DeviceRef,
  addon: NativeAddon,
  rows?: number,
): DispatchResult {
  const R = c.ranks;
  const L = localExperts(c);
  const M = c.maxTokensPerRank;
  const S = scalesPerRow(c, c.dispatchDtype);
  const masked = c.layout === "masked";
  const xr = region("recvX");
  const xBytes = rows === undefined ? xr.bytes : rows * c.hidden * dtypeBytes(c.dispatchDtype);
  const x = c.dispatchDtype === "bf16" ? new Uint16Array(xBytes / 2) : new Uint8Array(xBytes);
  if (xr.bytes > 0) addon.copyToHost(x.subarray(0, xr.bytes / x.BYTES_PER_ELEMENT), xr.ptr);
  let scales: Float32Array | null = null;
  if (S > 0) {
    const sr = region("recvScales");
    scales = new Float32Array(rows === undefined ? sr.bytes / 4 : rows * S);
    if (sr.bytes > 0) addon.copyToHost(scales.subarray(0, sr.bytes / 4), sr.ptr);
  }
  const mr = region("recvMeta");
  const meta = new Int32Array(mr.bytes / 4);
  addon.copyToHost(meta, mr.ptr);
  const expertCounts = new Int32Array(L);
  const expertOffsets = new Int32Array(L);
  let next = 0;
  for (let e = 0; e < L; e++) {
    for (let s = 0; s < R; s++) expertCounts[e] += sourceCounts[e * R + s];
    expertOffsets[e] = masked ? e * R * M : next;
    next += alignUp(expertCounts[e], c.expertAlignment);
  }
  return { x, scales, meta, expertOffsets, expertCounts, sourceCounts };
}
