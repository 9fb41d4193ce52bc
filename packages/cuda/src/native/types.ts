/**
 * The native addon's surface (src/native/binding/*.cc), typed once. Device addresses are bigint;
 * stream handles are bigint too (0n = the default stream). Errors thrown by the addon carry
 * `code` ("SY_ERR_TIMEOUT", ...), `status` and, for receive-stage failures, `info`.
 */
export interface NativeErrorInfo {
  code: number;
  /** 1 dispatch recv, 2 combine recv, 3 dispatch send */
  stage: number;
  peer: number;
  /** index in core's REGION_NAMES */
  region: number;
  detail0: number;
  detail1: number;
}

export interface NativeRuntimeInfo {
  rank: number;
  ranks: number;
  device: number;
  nodeRanks: number;
  smCount: number;
  directPeers: number;
  /** PEs of the world on this PE's GPU, itself included. */
  gpuShare: number;
}

/** sy_runtime_options: choices the library once read from the environment, now passed explicitly. */
export interface NativeRuntimeOptions {
  /** "put": NVSHMEM puts to every peer, NVLink ones too (masked layout only); default "auto". */
  transport?: "auto" | "put";
  /** false: the phases check pointers for NULL and alignment only; default true. */
  pointerChecks?: boolean;
  /** Contiguous layout: default grid of its copy kernels (the SM budget); 0 or absent = 24. */
  contiguousBlocks?: number;
  /**
   * Masked dispatch and combine (both layouts). true: every launch of a half (a stage call too) runs
   * that half's one kernel function, "dispatch" or "combine", as profilers that expect one kernel a
   * half count them; default false: a stage call runs its stage's own kernel (the masked receives 1
   * to 2 µs faster). The contiguous dispatch runs its two kernels either way.
   */
  kernelPerHalf?: boolean;
}

export interface NativeRuntime {
  info(): NativeRuntimeInfo;
  barrier(stream: bigint): void;
  benchPeerWrite(bytes: number, iters: number): number;
  destroy(): void;
}

export interface NativeEndpoint {
  region(index: number): { ptr: bigint; bytes: number };
  counts(): bigint;
  dispatchSend(
    x: bigint,
    scales: bigint,
    topkIdx: bigint,
    topkWeights: bigint,
    numTokens: number,
    stream: bigint,
  ): void;
  dispatchRecv(stream: bigint): void;
  combineSend(expertOut: bigint, stream: bigint): void;
  combineRecv(topkIdx: bigint, topkWeights: bigint, numTokens: number, y: bigint, stream: bigint): void;
  /** sy_dispatch: dispatch send and recv in one call (masked: one kernel launch); dispatchSend's arguments. */
  dispatch: NativeEndpoint["dispatchSend"];
  /** sy_combine: combine send and recv in one call (one kernel launch). */
  combine(
    expertOut: bigint,
    topkIdx: bigint,
    topkWeights: bigint,
    numTokens: number,
    y: bigint,
    stream: bigint,
  ): void;
  check(stream: bigint): Promise<void>;
  /** Contiguous layout: grid size of its copy kernels (the SM budget). */
  setBlocks(blocks: number): void;
  memory(): { deviceBytes: number; localBytes: number };
  /** Contiguous layout, between steps: exact-size output on or off (sy_endpoint_set_output). */
  setOutput(exact: boolean): void;
  /** Exact output: synchronises `stream` off the JavaScript thread, resolves to the step's padded rows (sy_dispatch_recv_rows); rejects as check does. */
  recvRows(stream: bigint): Promise<number>;
  /** Exact output: the step's rows into x [rows, hidden] and scales [rows, hidden/128] (0n for bf16). */
  recvInto(x: bigint, scales: bigint, stream: bigint): void;
  /** Turns the per-peer counters on (one small device allocation; enable before capturing graphs). */
  enableStats(): void;
  /** Synchronises `stream`, then the counters of the latest step, arrays of `ranks` entries. */
  stats(ranks: number, stream: bigint): NativeStats;
  destroy(): void;
}

/** sy_endpoint_stats: per peer p, rows and the receive stages' waits of the endpoint's latest step. */
export interface NativeStats {
  dispatchSent: number[];
  dispatchReceived: number[];
  combineSent: number[];
  combineReceived: number[];
  /** ns from dispatch recv's start until the last of p's signals arrived (or the receive gave up). */
  dispatchWaitNs: number[];
  /** ns from combine recv's start until p's signal arrived (or the receive gave up). */
  combineWaitNs: number[];
}

/** The NCCL communicator of the bench's baseline (collective constructor). */
export interface NativeNccl {
  version(): number;
  destroy(): void;
}

/** One rank's NCCL baseline for one config (params: the contiguous layout's). */
export interface NativeBaseline {
  dispatch(x: bigint, scales: bigint, topkIdx: bigint, numTokens: number, stream: bigint): void;
  /** The endpoint's combine call, the same arguments. */
  combine: NativeEndpoint["combine"];
  region(index: number): { ptr: bigint; bytes: number };
  counts(): bigint;
  memory(): number;
  destroy(): void;
}

export interface NativeDeviceBuffer {
  readonly ptr: bigint;
  readonly bytes: number;
  free(): void;
}

export interface NativeGraph {
  launch(stream: bigint): void;
  destroy(): void;
}

export interface NativeStream {
  readonly handle: bigint;
  synchronize(): void;
  beginCapture(): void;
  endCapture(): NativeGraph;
  destroy(): void;
}

export interface NativeEvent {
  record(stream: bigint, external?: boolean): void;
  elapsedMs(end: NativeEvent): number;
  destroy(): void;
}

export interface NativeAddon {
  version(): string;
  paramNames(): string;
  getUniqueId(): Uint8Array;
  copyToDevice(ptr: bigint, src: ArrayBufferView): void;
  copyToHost(dst: ArrayBufferView, ptr: bigint): void;
  memset(ptr: bigint, value: number, bytes: number): void;
  memInfo(): { free: number; total: number };
  /** kind: 0 bf16 over 17 binades per 128-block, 1 fp8 bits (no NaN), 2 fp32 powers of two, 3 bf16 in [-3, 3]. */
  fillRandom(ptr: bigint, count: bigint, kind: number, seed: bigint, stream: bigint): void;
  ncclUniqueId(): Uint8Array;
  Nccl: new (uniqueId: Uint8Array, rank: number, ranks: number, device: number) => NativeNccl;
  Baseline: new (nccl: NativeNccl, params: BigUint64Array) => NativeBaseline;
  Runtime: new (
    uniqueId: Uint8Array,
    rank: number,
    ranks: number,
    device: number,
    options?: NativeRuntimeOptions,
  ) => NativeRuntime;
  Endpoint: new (
    runtime: NativeRuntime,
    params: BigUint64Array,
    symmetricBytes: bigint,
    timeoutNs: bigint,
  ) => NativeEndpoint;
  DeviceBuffer: new (bytes: number) => NativeDeviceBuffer;
  Stream: new () => NativeStream;
  Event: new () => NativeEvent;
}
