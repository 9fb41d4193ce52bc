import { type EpConfig, type RegionName, scalesPerRow } from "@switchyard/core";
import type { CudaRuntime, NativeStream } from "@switchyard/cuda";
import { DeviceTensor, RankEndpoint } from "@switchyard/cuda";
import { compareSoak, type RankSet, soakStep } from "./soakPlan.js";

export interface SoakSetup {
  layouts: { config: EpConfig; sets: RankSet[] }[];
  timeoutMs: number;
}

export interface SoakChunk {
  rank: number;
  steps: number;
  mismatchedSteps: number;
  /** The first few differences, "step i (layout, set): ...". */
  mismatches: string[];
  /** A step that failed (TimeoutError, ProtocolError, ...): the run stops there. */
  error: string | null;
  ms: number;
}

interface DeviceSet {
  tokens: number;
  x: DeviceTensor | null;
  scales: DeviceTensor | null;
  idx: DeviceTensor | null;
  weights: DeviceTensor | null;
  expertOut: DeviceTensor;
  set: RankSet;
}

/** One layout on this rank: its endpoint, its input sets on the device, reusable host buffers. */
interface LayoutState {
  config: EpConfig;
  endpoint: RankEndpoint;
  sets: DeviceSet[];
  regions: { x: bigint; meta: bigint; scales: bigint };
  host: {
    counts: Int32Array;
    meta: Int32Array;
    x: Uint16Array | Uint8Array;
    scales: Float32Array | null;
    y: Uint16Array;
  };
  y: DeviceTensor;
}

type View = Parameters<typeof DeviceTensor.from>[0];

function upload(view: View, addon: CudaRuntime["addon"]): DeviceTensor | null {
  return view.byteLength > 0 ? DeviceTensor.from(view, addon) : null;
}

/**
 * A rank's side of the soak (worker ops soakSetup / soakRun / soakClose): every input set of every
 * layout uploaded once, then steps run back to back on one stream, each one's counts, data rows and
 * y compared with core's reference; host buffers are reused, so a flat memory figure means
 * something. Ranks couple only through the protocol (no barrier per step).
 */
export class SoakRank {
  private readonly layouts: LayoutState[] = [];
  private readonly stream: NativeStream;

  constructor(
    private readonly runtime: CudaRuntime,
    setup: SoakSetup,
  ) {
    const addon = runtime.addon;
    this.stream = new addon.Stream();
    for (const { config, sets } of setup.layouts) {
      const endpoint = RankEndpoint.create(runtime, config, { timeoutMs: setup.timeoutMs });
      const region = (n: RegionName) => endpoint.region(n);
      const xr = region("recvX");
      const mr = region("recvMeta");
      const S = scalesPerRow(config, config.dispatchDtype);
      const sr = S ? region("recvScales") : { ptr: 0n, bytes: 0 };
      const L = config.experts / config.ranks;
      this.layouts.push({
        config,
        endpoint,
        sets: sets.map((set) => ({
          tokens: set.tokens,
          x: upload(set.input.x, addon),
          scales: set.input.scales ? upload(set.input.scales, addon) : null,
          idx: upload(set.input.topkIdx, addon),
          weights: upload(set.input.topkWeights, addon),
          expertOut: DeviceTensor.from(set.expertOut, addon),
          set,
        })),
        regions: { x: xr.ptr, meta: mr.ptr, scales: sr.ptr },
        host: {
          counts: new Int32Array(L * config.ranks),
          meta: new Int32Array(mr.bytes / 4),
          x: config.dispatchDtype === "bf16" ? new Uint16Array(xr.bytes / 2) : new Uint8Array(xr.bytes),
          scales: S ? new Float32Array(sr.bytes / 4) : null,
          y: new Uint16Array(config.maxTokensPerRank * config.hidden),
        },
        y: DeviceTensor.alloc(config.maxTokensPerRank * config.hidden * 2, addon),
      });
    }
  }

  /** Steps [from, to) of the global sequence (soakStep picks the layout and set of each). */
  async run(from: number, to: number): Promise<SoakChunk> {
    const t0 = Date.now();
    const addon = this.runtime.addon;
    const s = this.stream.handle;
    const out: SoakChunk = {
      rank: this.runtime.rank,
      steps: 0,
      mismatchedSteps: 0,
      mismatches: [],
      error: null,
      ms: 0,
    };
    for (let i = from; i < to; i++) {
      const pick = soakStep(i, this.layouts.length, this.layouts[0].sets.length);
      const l = this.layouts[pick.layout];
      const d = l.sets[pick.set];
      const T = d.tokens;
      const ep = l.endpoint;
      try {
        ep.dispatchSend(
          {
            x: d.x ?? 0n,
            scales: d.scales ?? undefined,
            topkIdx: d.idx ?? 0n,
            topkWeights: d.weights ?? 0n,
            numTokens: T,
          },
          s,
        );
        ep.dispatchRecv(s);
        await ep.synchronize(s);
        addon.copyToHost(l.host.counts, ep.native.counts());
        addon.copyToHost(l.host.meta, l.regions.meta);
        addon.copyToHost(l.host.x, l.regions.x);
        if (l.host.scales) addon.copyToHost(l.host.scales, l.regions.scales);
        ep.combineSend(d.expertOut, s);
        ep.combineRecv({ topkIdx: d.idx ?? 0n, topkWeights: d.weights ?? 0n, numTokens: T, y: l.y }, s);
        await ep.synchronize(s);
        const y = l.host.y.subarray(0, T * l.config.hidden);
        if (y.length) addon.copyToHost(y, l.y.ptr);
        const diff = compareSoak(d.set.want, { ...l.host, y }, l.config.hidden);
        if (diff.length) {
          out.mismatchedSteps++;
          if (out.mismatches.length < 10)
            out.mismatches.push(
              `step ${i} (${l.config.layout}, set ${pick.set}, rank ${out.rank}): ${diff.join("; ")}`,
            );
        }
        out.steps++;
      } catch (e) {
        out.error = `step ${i} (${l.config.layout}, set ${pick.set}): ${(e as Error).name}: ${(e as Error).message}`;
        break;
      }
    }
    out.ms = Date.now() - t0;
    return out;
  }

  close(): void {
    for (const l of this.layouts) {
      for (const d of l.sets) for (const t of [d.x, d.scales, d.idx, d.weights, d.expertOut]) t?.free();
      l.y.free();
      l.endpoint.destroy();
    }
    this.stream.destroy();
  }
}
