import type { EpConfig } from "@switchyard/core";
import type { CudaRuntime } from "@switchyard/cuda";
import { DeviceTensor } from "@switchyard/cuda";
import { NcclBaseline } from "../baseline.js";
import type { NcclComm } from "../nccl.js";
import { compareDispatchContiguous, expertOutputsContiguous } from "./contiguous.js";
import { compareY, makeInputs, referenceY } from "./step.js";

export interface BaselineStepOptions {
  config: EpConfig;
  seed: number;
  tokens: number;
  steps: number;
}

/**
 * One rank's part of the baseline check: `steps` steps of the NCCL baseline on inputs from
 * `seed` (a new routing each step), each dispatch output compared with core's reference (the
 * contiguous layout: counts, offsets, rows, padding) and each y bit for bit. The bench's
 * baseline must compute the same function as the library before its times mean anything.
 */
export async function runBaselineStep(
  runtime: CudaRuntime,
  comm: NcclComm,
  o: BaselineStepOptions,
): Promise<{ rank: number; errors: string[] }> {
  const addon = runtime.addon;
  const rank = runtime.rank;
  const baseline = NcclBaseline.create(addon, comm, o.config);
  const contiguous = baseline.config;
  const stream = new addon.Stream();
  const s = stream.handle;
  const errors: string[] = [];
  const bufs: DeviceTensor[] = [];
  const keep = (t: DeviceTensor) => {
    bufs.push(t);
    return t;
  };
  try {
    for (let step = 0; step < o.steps && errors.length === 0; step++) {
      const inputs = makeInputs(contiguous, o.tokens, o.seed + step);
      const mine = inputs[rank];
      const x = keep(DeviceTensor.from(mine.x, addon));
      const scales = mine.scales ? keep(DeviceTensor.from(mine.scales, addon)) : undefined;
      const idx = keep(DeviceTensor.from(mine.topkIdx, addon));
      const w = keep(DeviceTensor.from(mine.topkWeights, addon));
      const y = keep(DeviceTensor.alloc(o.tokens * contiguous.hidden * 2, addon));
      y.fill(0xff);
      runtime.barrier(s);
      baseline.dispatch(x.ptr, scales?.ptr ?? 0n, idx.ptr, o.tokens, s);
      stream.synchronize();
      const got = baseline.readDispatch();
      errors.push(
        ...compareDispatchContiguous(contiguous, inputs, rank, got).map((m) => `step ${step}: ${m}`),
      );
      const out = keep(DeviceTensor.from(expertOutputsContiguous(contiguous, rank, got), addon));
      baseline.combine(out.ptr, idx.ptr, w.ptr, o.tokens, y.ptr, s);
      stream.synchronize();
      const want = referenceY(contiguous, inputs, rank);
      errors.push(...compareY(rank, y.download(Uint16Array), want).map((m) => `step ${step}: ${m}`));
    }
    runtime.barrier(s);
    stream.synchronize();
  } finally {
    for (const b of bufs) b.free();
    baseline.destroy();
    stream.destroy();
  }
  return { rank, errors };
}
