import { dtypeBytes, type EpConfig, localExperts, scalesPerRow } from "@switchyard/core";
import type { CudaRuntime } from "@switchyard/cuda";
import { DeviceTensor, RankEndpoint } from "@switchyard/cuda";
import { compareDispatchAny, expertOutputsAny } from "./contiguous.js";
import { compareY, makeInputs, referenceY } from "./step.js";

export interface GraphStepOptions {
  config: EpConfig;
  seed: number;
  /** Tokens per DP group (<= maxTokensPerRank). */
  tokens: number;
  warmup: number;
  replays: number;
  timeoutMs: number;
  /** Check y after every replay (else only after the last one). */
  checkEvery: boolean;
  /** The endpoint's SM budget (setBlocks), if any: 1 makes the masked receive build its tables first. */
  blocks?: number;
}

export interface GraphStepResult {
  rank: number;
  errors: string[];
  /** Per timed replay, CUDA events around each half of the graph. */
  dispatchMs: number[];
  combineMs: number[];
  /** Rows this rank sent to other ranks in dispatch, and bytes of those rows (payload + scales + meta). */
  remoteDispatchRows: number;
  remoteDispatchBytes: number;
  /** Rows this rank's experts sent back to other ranks in combine, and their bytes. */
  remoteCombineRows: number;
  remoteCombineBytes: number;
  replaysChecked: number;
  /** PEs this rank's kernels store to (itself included); the others take NVSHMEM puts. */
  directPeers: number;
}

/**
 * One rank's part of the graph check (run in every rank's process at once; either layout): an eager step checked
 * against core's reference, then the four phases captured into one CUDA graph (events between
 * the halves) and replayed `warmup + replays` times with a barrier before each, y poisoned and
 * re-checked bit for bit, the dispatch result re-checked after the last replay.
 */
export async function runGraphStep(runtime: CudaRuntime, o: GraphStepOptions): Promise<GraphStepResult> {
  const { config } = o;
  const addon = runtime.addon;
  const rank = runtime.rank;
  const H = config.hidden;
  const K = config.topK;
  const L = localExperts(config);
  const inputs = makeInputs(config, o.tokens, o.seed);
  const mine = inputs[rank];
  const endpoint = RankEndpoint.create(runtime, config, { timeoutMs: o.timeoutMs });
  if (o.blocks !== undefined) endpoint.setBlocks(o.blocks);
  const stream = new addon.Stream();
  const s = stream.handle;
  const bufs: DeviceTensor[] = [];
  const keep = (t: DeviceTensor) => {
    bufs.push(t);
    return t;
  };
  const x = keep(DeviceTensor.from(mine.x, addon));
  const scales = mine.scales ? keep(DeviceTensor.from(mine.scales, addon)) : undefined;
  const idx = keep(DeviceTensor.from(mine.topkIdx, addon));
  const w = keep(DeviceTensor.from(mine.topkWeights, addon));
  const y = keep(DeviceTensor.alloc(o.tokens * H * 2, addon));
  const expertOut = keep(DeviceTensor.alloc(endpoint.layout.rows * H * 2, addon));
  const events = [new addon.Event(), new addon.Event(), new addon.Event()];
  const result: GraphStepResult = {
    rank,
    errors: [],
    dispatchMs: [],
    combineMs: [],
    remoteDispatchRows: 0,
    remoteDispatchBytes: 0,
    remoteCombineRows: 0,
    remoteCombineBytes: 0,
    replaysChecked: 0,
    directPeers: runtime.info().directPeers,
  };
  const wantY = referenceY(config, inputs, rank);
  const send = () =>
    endpoint.dispatchSend({ x, scales, topkIdx: idx, topkWeights: w, numTokens: o.tokens }, s);
  const combineRecv = () => endpoint.combineRecv({ topkIdx: idx, topkWeights: w, numTokens: o.tokens, y }, s);
  try {
    // 1. Eager step.
    runtime.barrier(s);
    send();
    endpoint.dispatchRecv(s);
    const dispatched = await endpoint.readDispatch(s);
    result.errors.push(...compareDispatchAny(config, inputs, rank, dispatched));
    expertOut.upload(expertOutputsAny(config, rank, dispatched));
    endpoint.combineSend(expertOut, s);
    combineRecv();
    await endpoint.synchronize(s);
    result.errors.push(...compareY(rank, y.download(Uint16Array), wantY).map((m) => `eager: ${m}`));

    // Bytes that crossed NVLink, for the bandwidth comparison.
    const rowBytes =
      H * dtypeBytes(config.dispatchDtype) + scalesPerRow(config, config.dispatchDtype) * 4 + 16;
    for (let t = 0; t < o.tokens; t++) {
      if (t % config.dpSize !== rank % config.dpSize) continue;
      for (let k = 0; k < K; k++) {
        const e = mine.topkIdx[t * K + k];
        if (e >= 0 && Math.floor(e / L) !== rank) result.remoteDispatchRows++;
      }
    }
    result.remoteDispatchBytes = result.remoteDispatchRows * rowBytes;
    const R = config.ranks;
    for (let e = 0; e < L; e++) {
      for (let src = 0; src < R; src++) {
        if (Math.floor(src / config.dpSize) === Math.floor(rank / config.dpSize)) continue;
        result.remoteCombineRows += dispatched.sourceCounts[e * R + src] * config.dpSize;
      }
    }
    result.remoteCombineBytes = result.remoteCombineRows * H * 2;

    // 2. Capture the whole step into one graph.
    stream.beginCapture();
    events[0].record(s, true);
    send();
    endpoint.dispatchRecv(s);
    events[1].record(s, true);
    endpoint.combineSend(expertOut, s);
    combineRecv();
    events[2].record(s, true);
    const graph = stream.endCapture();

    // 3. Replays.
    const total = o.warmup + o.replays;
    for (let i = 0; i < total; i++) {
      const check = o.checkEvery || i === total - 1;
      if (check) y.fill(0xff);
      runtime.barrier(s);
      graph.launch(s);
      await endpoint.synchronize(s);
      if (i >= o.warmup) {
        result.dispatchMs.push(events[0].elapsedMs(events[1]));
        result.combineMs.push(events[1].elapsedMs(events[2]));
      }
      if (check) {
        result.replaysChecked++;
        const errs = compareY(rank, y.download(Uint16Array), wantY);
        if (errs.length) result.errors.push(...errs.map((m) => `replay ${i}: ${m}`));
      }
    }
    const last = await endpoint.readDispatch(s);
    result.errors.push(...compareDispatchAny(config, inputs, rank, last).map((m) => `after replays: ${m}`));
    graph.destroy();
    runtime.barrier(s);
    stream.synchronize();
  } finally {
    for (const e of events) e.destroy();
    for (const b of bufs) b.free();
    endpoint.destroy();
    stream.destroy();
  }
  return result;
}
