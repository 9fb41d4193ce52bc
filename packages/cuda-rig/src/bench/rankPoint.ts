import type { EpConfig } from "@switchyard/core";
import type { CudaRuntime, NativeEvent, NativeGraph } from "@switchyard/cuda";
import { RankEndpoint } from "@switchyard/cuda";
import { RankInputs } from "./rankInputs.js";
import type { PhaseName } from "./report.js";
import { countsMismatch, meanRemoteBytes } from "./routing.js";

export interface RankPointOptions {
  config: EpConfig;
  warmup: number;
  steps: number;
  rotate: number;
  seed: number;
  /** Replay the step from CUDA graphs (one per input set) instead of launching it every step. */
  graphs: boolean;
  /** Contiguous layout: the SM budget (blocks of its copy kernels). */
  blocks: number;
  /** Masked layout: the SMs its grids may use; 0 (or absent): every SM. */
  maskedSms?: number;
  timeoutMs: number;
}

export interface RankPointResult {
  rank: number;
  /** Per phase, per measured step, microseconds (CUDA events on this rank's stream). */
  samplesUs: Partial<Record<PhaseName, number[]>>;
  remoteDispatchBytes: number;
  remoteCombineBytes: number;
  deviceBytes: number;
  layoutBytes: number;
  deviceUsedBytes: number;
  sms: number;
  errors: string[];
}

/** Event indices around the phases: e0 send e1 recv e2 | e2 send e3 recv e4. */
const SPANS: [PhaseName, number, number][] = [
  ["dispatchSend", 0, 1],
  ["dispatchRecv", 1, 2],
  ["dispatch", 0, 2],
  ["combineSend", 2, 3],
  ["combineRecv", 3, 4],
  ["combine", 2, 4],
  ["step", 0, 4],
];

/**
 * One rank's part of a bench point (every rank runs it at once): the endpoint for the point's
 * config, `rotate` input sets made on the device, then `warmup + steps` steps, each after a
 * barrier, timed with CUDA events between the four phases (inside the graph when `graphs`).
 * After the last step the counts dispatch recv reported are compared with the routing's.
 */
export async function runRankPoint(runtime: CudaRuntime, o: RankPointOptions): Promise<RankPointResult> {
  const { config } = o;
  const addon = runtime.addon;
  const rank = runtime.rank;
  const info = runtime.info();
  const endpoint = RankEndpoint.create(runtime, config, { timeoutMs: o.timeoutMs });
  const contiguous = config.layout === "contiguous";
  const maskedSms = o.maskedSms ? Math.min(o.maskedSms, info.smCount) : info.smCount;
  if (contiguous) endpoint.setBlocks(Math.min(o.blocks, info.smCount));
  else if (maskedSms < info.smCount) endpoint.setBlocks(maskedSms);
  const stream = new addon.Stream();
  const s = stream.handle;
  const inputs = new RankInputs(addon, config, rank, endpoint.layout.rows, o.rotate, o.seed, s);
  const events: NativeEvent[] = Array.from({ length: 5 }, () => new addon.Event());
  const graphs: NativeGraph[] = [];
  const T = config.maxTokensPerRank;
  const samplesUs: Partial<Record<PhaseName, number[]>> = {};
  for (const [name] of SPANS) samplesUs[name] = [];
  const errors: string[] = [];
  const step = (set: number, external: boolean) => {
    const inp = inputs.sets[set];
    events[0].record(s, external);
    endpoint.dispatchSend(
      { x: inp.x, scales: inp.scales, topkIdx: inp.idx, topkWeights: inp.weights, numTokens: T },
      s,
    );
    events[1].record(s, external);
    endpoint.dispatchRecv(s);
    events[2].record(s, external);
    endpoint.combineSend(inputs.expertOut, s);
    events[3].record(s, external);
    endpoint.combineRecv({ topkIdx: inp.idx, topkWeights: inp.weights, numTokens: T, y: inputs.y }, s);
    events[4].record(s, external);
  };
  try {
    stream.synchronize();
    if (o.graphs) {
      for (let set = 0; set < o.rotate; set++) {
        stream.beginCapture();
        step(set, true);
        graphs.push(stream.endCapture());
      }
    }
    const mem = addon.memInfo();
    for (let i = 0; i < o.warmup + o.steps; i++) {
      const set = i % o.rotate;
      runtime.barrier(s);
      if (o.graphs) graphs[set].launch(s);
      else step(set, false);
      await endpoint.synchronize(s);
      if (i < o.warmup) continue;
      for (const [name, a, b] of SPANS) samplesUs[name]!.push(events[a].elapsedMs(events[b]) * 1000);
    }
    const last = (o.warmup + o.steps - 1) % o.rotate;
    const got = await endpoint.readCounts(s);
    const mismatch = countsMismatch("counts", config, inputs.routings[last], rank, got);
    if (mismatch) errors.push(mismatch);
    const traffic = meanRemoteBytes(config, inputs.routings, rank);
    runtime.barrier(s);
    stream.synchronize();
    return {
      rank,
      samplesUs,
      remoteDispatchBytes: traffic.dispatchBytes,
      remoteCombineBytes: traffic.combineBytes,
      deviceBytes: endpoint.memory().deviceBytes,
      layoutBytes: endpoint.layout.bytesPerRank,
      deviceUsedBytes: mem.total - mem.free,
      sms: contiguous ? Math.min(o.blocks, info.smCount) : maskedSms,
      errors,
    };
  } finally {
    for (const g of graphs) g.destroy();
    for (const e of events) e.destroy();
    inputs.free();
    endpoint.destroy();
    stream.destroy();
  }
}
