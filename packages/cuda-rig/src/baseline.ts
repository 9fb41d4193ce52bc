import {
  computeLayout,
  type DispatchResult,
  type EpConfig,
  type Layout,
  localExperts,
  REGION_NAMES,
  UnsupportedError,
} from "@switchyard/core";
import type { DeviceRef, NativeAddon, NativeBaseline } from "@switchyard/cuda";
import { packParams, readDispatchResult } from "@switchyard/cuda";
import type { NcclComm } from "./nccl.js";

/**
 * The bench's NCCL baseline for one config on one rank: what one would write without a special
 * library. dispatch: per-(rank, expert) counts all-to-all through NCCL, a host synchronisation,
 * then grouped ncclSend / ncclRecv with those splits and a local lay-out per expert (the
 * contiguous layout's order); combine: the reverse, then the weighted sum. Its buffers are sized
 * by the contiguous layout of the config (whatever the config's own layout), dpSize 1 only.
 */
export class NcclBaseline {
  readonly layout: Layout;
  private destroyed = false;

  private constructor(
    readonly config: Readonly<EpConfig>,
    readonly native: NativeBaseline,
    private readonly addon: NativeAddon,
  ) {
    this.layout = computeLayout(config);
  }

  static create(addon: NativeAddon, comm: NcclComm, config: Readonly<EpConfig>): NcclBaseline {
    if (config.dpSize !== 1) throw new UnsupportedError("cuda", "the NCCL baseline with dpSize > 1");
    const contiguous: EpConfig = { ...config, layout: "contiguous" };
    return new NcclBaseline(
      contiguous,
      new addon.Baseline(comm.native, packParams(computeLayout(contiguous))),
      addon,
    );
  }

  private live(): void {
    if (this.destroyed) throw new Error("NcclBaseline: destroyed");
  }

  /** Blocks the calling thread while the counts travel (the host synchronisation). */
  dispatch(x: bigint, scales: bigint, topkIdx: bigint, numTokens: number, stream: bigint): void {
    this.live();
    this.native.dispatch(x, scales, topkIdx, numTokens, stream);
  }

  /** expertOut [layout.rows, hidden] bf16, row-aligned with the dispatch output; y [T, hidden] bf16. */
  combine(
    expertOut: bigint,
    topkIdx: bigint,
    topkWeights: bigint,
    numTokens: number,
    y: bigint,
    stream: bigint,
  ): void {
    this.live();
    this.native.combine(expertOut, topkIdx, topkWeights, numTokens, y, stream);
  }

  /** Device memory the baseline allocated. */
  memory(): number {
    this.live();
    return this.native.memory();
  }

  /** Host copy of the last dispatch's output (the caller synchronised its stream). */
  readDispatch(): DispatchResult {
    this.live();
    const c = this.config;
    const counts = new Int32Array(localExperts(c) * c.ranks);
    this.addon.copyToHost(counts, this.native.counts());
    const region = (name: (typeof REGION_NAMES)[number]): DeviceRef =>
      this.native.region(REGION_NAMES.indexOf(name));
    return readDispatchResult(c, counts, region, this.addon);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.native.destroy();
  }
}
