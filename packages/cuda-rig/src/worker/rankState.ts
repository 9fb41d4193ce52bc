import {
  type DispatchInput,
  type DispatchResult,
  dtypeBytes,
  type EpConfig,
  scalesPerRow,
  tokensOf,
} from "@switchyard/core";
import type { CudaRuntime, NativeStream, OutputMode } from "@switchyard/cuda";
import { DeviceTensor, type EndpointStats, RankEndpoint } from "@switchyard/cuda";

/** A receive's answer: the result and, with stats on, the endpoint's per-peer counters. */
export interface WithStats<T> {
  value: T;
  stats: EndpointStats | null;
}

/** Runs between enqueueing a receive and waiting for it (the fault world's hook point). */
export type Midway = () => Promise<void>;

/**
 * One world-level session's state inside a rank's worker: the endpoint, device copies of the
 * step's inputs, and a stream. The launcher validated every input before it got here.
 */
export class RankState {
  readonly endpoint: RankEndpoint;
  readonly stream: NativeStream;
  private readonly x!: DeviceTensor;
  private readonly scales!: DeviceTensor | null;
  private readonly idx!: DeviceTensor;
  private readonly weights!: DeviceTensor;
  private expertOut!: DeviceTensor;
  private readonly y!: DeviceTensor;
  private tokens = 0;
  /** Exact output: this step's receive buffers, sized by dispatchRecvRows. */
  private placed: { x: DeviceTensor; scales: DeviceTensor | null; rows: number } | null = null;
  /**
   * Exact output: buffers of earlier sizes, freed once a step has finished. Not at once: cudaFree
   * waits for the whole device, and with bounded staging this rank's round sender is still running
   * then, waiting for peers that wait for this rank's receive: a freeing host would never place it.
   */
  private retired: DeviceTensor[] = [];

  constructor(
    readonly runtime: CudaRuntime,
    readonly config: Readonly<EpConfig>,
    timeoutMs: number,
    private readonly stats = false,
    output?: OutputMode,
  ) {
    const addon = runtime.addon;
    this.endpoint = RankEndpoint.create(runtime, config, { timeoutMs, output });
    this.stream = new addon.Stream();
    if (this.endpoint.bystander) return; // joins the collective allocation only
    if (stats) this.endpoint.enableStats();
    const M = config.maxTokensPerRank;
    const H = config.hidden;
    const K = config.topK;
    const S = scalesPerRow(config, config.inputDtype);
    this.x = DeviceTensor.alloc(M * H * dtypeBytes(config.inputDtype), addon);
    this.scales = S ? DeviceTensor.alloc(M * S * 4, addon) : null;
    this.idx = DeviceTensor.alloc(M * K * 4, addon);
    this.weights = DeviceTensor.alloc(M * K * 4, addon);
    // Exact output sizes expert_out per step (combineSend); worst case once.
    this.expertOut = DeviceTensor.alloc(
      this.endpoint.output === "exact" ? 0 : this.endpoint.layout.rows * H * 2,
      addon,
    );
    this.y = DeviceTensor.alloc(M * H * 2, addon);
  }

  dispatchSend(input: DispatchInput): void {
    const T = tokensOf(this.config, input);
    this.x.upload(input.x);
    if (this.scales && input.scales) this.scales.upload(input.scales);
    this.idx.upload(input.topkIdx);
    // Weights at home: none here (combineRecv takes them), and the endpoint is given none.
    if (input.topkWeights) this.weights.upload(input.topkWeights);
    this.tokens = T;
    this.endpoint.dispatchSend(
      {
        x: this.x,
        scales: this.scales ?? undefined,
        topkIdx: this.idx,
        topkWeights: input.topkWeights ? this.weights : undefined,
        numTokens: T,
      },
      this.stream.handle,
    );
  }

  async dispatchRecv(midway?: Midway): Promise<WithStats<DispatchResult>> {
    const ep = this.endpoint;
    ep.dispatchRecv(this.stream.handle);
    await midway?.();
    let value: DispatchResult;
    if (ep.output === "exact") {
      // The user's path of exact output: rows, buffers of exactly that size, placement.
      const rows = await ep.dispatchRecvRows(this.stream.handle);
      const placed = this.placeBuffers(rows);
      ep.dispatchRecvInto({ x: placed.x, scales: placed.scales ?? undefined }, this.stream.handle);
      value = await ep.readDispatch(this.stream.handle, { x: placed.x, scales: placed.scales ?? undefined });
    } else {
      value = await ep.readDispatch(this.stream.handle);
    }
    return { value, stats: this.stats ? ep.readStats(this.stream.handle) : null };
  }

  /** Exact output: receive and expert_out buffers of exactly `rows` rows (reallocated when the size changes). */
  private placeBuffers(rows: number): { x: DeviceTensor; scales: DeviceTensor | null; rows: number } {
    if (this.placed?.rows === rows) return this.placed;
    this.retirePlaced();
    const c = this.config;
    const addon = this.runtime.addon;
    const S = scalesPerRow(c, c.dispatchDtype);
    this.placed = {
      x: DeviceTensor.alloc(rows * c.hidden * dtypeBytes(c.dispatchDtype), addon),
      scales: S > 0 ? DeviceTensor.alloc(rows * S * 4, addon) : null,
      rows,
    };
    this.retired.push(this.expertOut);
    this.expertOut = DeviceTensor.alloc(rows * c.hidden * 2, addon);
    return this.placed;
  }

  private retirePlaced(): void {
    if (this.placed === null) return;
    this.retired.push(this.placed.x);
    if (this.placed.scales) this.retired.push(this.placed.scales);
    this.placed = null;
  }

  /** Frees retired buffers: only once the step's work (the round sender included) has finished. */
  private freeRetired(): void {
    for (const t of this.retired) t.free();
    this.retired = [];
  }

  combineSend(expertOut: Uint16Array): void {
    const ep = this.endpoint;
    // Exact output: the step's rows only (the host array is core's, of the layout's rows).
    const rows = ep.output === "exact" ? (this.placed?.rows ?? 0) : ep.layout.rows;
    this.expertOut.upload(expertOut.subarray(0, rows * this.config.hidden));
    ep.combineSend(this.expertOut, this.stream.handle);
  }

  async combineRecv(midway?: Midway, weights?: Float32Array): Promise<WithStats<Uint16Array>> {
    const T = this.tokens;
    if (weights) this.weights.upload(weights); // weights at home: this rank's, for the sum here
    this.endpoint.combineRecv(
      { topkIdx: this.idx, topkWeights: weights ? this.weights : undefined, numTokens: T, y: this.y },
      this.stream.handle,
    );
    await midway?.();
    await this.endpoint.synchronize(this.stream.handle);
    this.freeRetired(); // combine recv waited for the round sender: nothing runs on this rank now
    const value = this.y.download(Uint16Array, T * this.config.hidden);
    return { value, stats: this.stats ? this.endpoint.readStats(this.stream.handle) : null };
  }

  close(): void {
    try {
      this.endpoint.destroy();
    } finally {
      this.retirePlaced();
      this.freeRetired();
      for (const t of [this.x, this.scales, this.idx, this.weights, this.expertOut, this.y]) t?.free();

      this.stream.destroy();
    }
  }
}
