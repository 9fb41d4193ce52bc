/**
 * The native addon's surface (src/native/binding/*.cc), typed once. Device addresses are bigint;
 * stream handles are bigint too (0n = the default stream). Errors thrown by the addon carry
 * `code` ("SY_ERR_TIMEOUT", ...), `status` and, for receive-stage failures, `info`.
 */
export interface NativeErrorInfo {
  code: number;
  /** 1 dispatch recv, 2 combine recv */
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
  dispatchSend(x: bigint, scales: bigint, topkIdx: bigint, numTokens: number, stream: bigint): void;
  dispatchRecv(stream: bigint): void;
  combineSend(expertOut: bigint, stream: bigint): void;
  combineRecv(topkIdx: bigint, topkWeights: bigint, numTokens: number, y: bigint, stream: bigint): void;
  check(stream: bigint): Promise<void>;
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
  Runtime: new (uniqueId: Uint8Array, rank: number, ranks: number, device: number) => NativeRuntime;
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
