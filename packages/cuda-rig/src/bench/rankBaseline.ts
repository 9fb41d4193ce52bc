import type { EpConfig } from "@switchyard/core";
import type { CudaRuntime } from "@switchyard/cuda";
import { NcclBaseline } from "../baseline.js";
import type { NcclComm } from "../nccl.js";
import { RankInputs } from "./rankInputs.js";
import type { RankPointOptions, RankPointResult } from "./rankPoint.js";
import type { PhaseName } from "./report.js";
import { countsMismatch, meanRemoteBytes } from "./routing.js";

/**
 * One rank's part of a baseline point: the same inputs as runRankPoint (same seed, same
 * routing), `warmup + steps` eager steps (the count exchange synchronises the host, so no
 * graph), each after a barrier, CUDA events around dispatch and combine.
 */
export async function runRankBaseline(
  runtime: CudaRuntime,
  comm: NcclComm,
  o: RankPointOptions,
): Promise<RankPointResult> {
  const config: EpConfig = o.config;
  const addon = runtime.addon;
  const rank = runtime.rank;
  const baseline = NcclBaseline.create(addon, comm, config);
  const stream = new addon.Stream();
  const s = stream.handle;
  const inputs = new RankInputs(addon, config, rank, baseline.layout.rows, o.rotate, o.seed, s);
  const events = Array.from({ length: 3 }, () => new addon.Event());
  const T = config.maxTokensPerRank;
  const samplesUs: Partial<Record<PhaseName, number[]>> = { dispatch: [], combine: [], step: [] };
  const errors: string[] = [];
  try {
    stream.synchronize();
    const mem = addon.memInfo();
    for (let i = 0; i < o.warmup + o.steps; i++) {
      const inp = inputs.sets[i % o.rotate];
      runtime.barrier(s);
      events[0].record(s);
      baseline.dispatch(inp.x.ptr, inp.scales?.ptr ?? 0n, inp.idx.ptr, T, s);
      events[1].record(s);
      baseline.combine(inputs.expertOut.ptr, inp.idx.ptr, inp.weights.ptr, T, inputs.y.ptr, s);
      events[2].record(s);
      stream.synchronize();
      if (i < o.warmup) continue;
      samplesUs.dispatch!.push(events[0].elapsedMs(events[1]) * 1000);
      samplesUs.combine!.push(events[1].elapsedMs(events[2]) * 1000);
      samplesUs.step!.push(events[0].elapsedMs(events[2]) * 1000);
    }
    const last = (o.warmup + o.steps - 1) % o.rotate;
    const got = baseline.readDispatch().sourceCounts;
    const mismatch = countsMismatch("baseline counts", config, inputs.routings[last], rank, got);
    if (mismatch) errors.push(mismatch);
    const traffic = meanRemoteBytes(config, inputs.routings, rank);
    runtime.barrier(s);
    stream.synchronize();
    return {
      rank,
      samplesUs,
      remoteDispatchBytes: traffic.dispatchBytes,
      remoteCombineBytes: traffic.combineBytes,
      deviceBytes: baseline.memory(),
      layoutBytes: baseline.layout.bytesPerRank,
      deviceUsedBytes: mem.total - mem.free,
      sms: 0,
      errors,
    };
  } finally {
    for (const e of events) e.destroy();
    inputs.free();
    baseline.destroy();
    stream.destroy();
  }
}
