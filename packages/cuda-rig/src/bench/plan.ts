import { defineConfig, type EpConfig, type LayoutKind } from "@switchyard/core";
import { endpointLayout } from "@switchyard/cuda";
import { heapSizeFor } from "../pool.js";
import type { BenchOptions } from "./args.js";
import type { RankPointResult } from "./rankPoint.js";
import { bandwidth, type Impl, PHASES, type PhaseName, type PointResult } from "./report.js";
import { maxOverRanks, summarize } from "./stats.js";

/** One (layout, tokens per rank) of the sweep and its config (maxTokensPerRank = tokens). */
export interface BenchPoint {
  layout: LayoutKind;
  tokens: number;
  config: EpConfig;
}

/** Every point of the sweep, masked first, tokens ascending within a layout. */
export function planPoints(o: BenchOptions, ranks: number): BenchPoint[] {
  const out: BenchPoint[] = [];
  for (const layout of (["masked", "contiguous"] as const).filter((l) => o.layouts.includes(l))) {
    for (const tokens of [...new Set(o.tokens[layout])].sort((a, b) => a - b)) {
      const config = defineConfig({
        ranks,
        experts: o.experts,
        topK: o.topK,
        hidden: o.hidden,
        maxTokensPerRank: tokens,
        inputDtype: o.inputDtype,
        dispatchDtype: o.dispatchDtype,
        layout,
        expertAlignment: layout === "contiguous" ? o.alignment : 1,
      });
      out.push({ layout, tokens, config });
    }
  }
  return out;
}

/** NVSHMEM_SYMMETRIC_SIZE that fits the largest point's symmetric heap (endpoints live one at a time). */
export function heapBytesFor(points: readonly BenchPoint[]): number {
  return heapSizeFor(Math.max(0, ...points.map((p) => endpointLayout(p.config).symmetricBytes)));
}

/**
 * A point's result from every rank's samples: per phase, the slowest rank of each step, then
 * median / p90 / p99 over steps; bytes averaged over ranks; memory the largest over ranks.
 */
export function aggregate(
  point: BenchPoint,
  impl: Impl,
  mode: "graph" | "eager",
  ranks: readonly RankPointResult[],
  nvlinkGBps: number | null,
): PointResult {
  const phases: PointResult["phases"] = {};
  const rankMedianUs: PointResult["rankMedianUs"] = {};
  for (const phase of PHASES) {
    const per = ranks.map((r) => r.samplesUs[phase as PhaseName]);
    if (per.some((x) => x === undefined || x.length === 0)) continue;
    phases[phase] = summarize(maxOverRanks(per as number[][]));
    rankMedianUs[phase] = per.map((x) => summarize(x as number[]).median);
  }
  const mean = (f: (r: RankPointResult) => number) =>
    ranks.reduce((a, r) => a + f(r), 0) / Math.max(1, ranks.length);
  const max = (f: (r: RankPointResult) => number) => Math.max(0, ...ranks.map(f));
  const bytes = { dispatch: mean((r) => r.remoteDispatchBytes), combine: mean((r) => r.remoteCombineBytes) };
  const d = bandwidth(bytes.dispatch, phases.dispatch?.median, nvlinkGBps);
  const c = bandwidth(bytes.combine, phases.combine?.median, nvlinkGBps);
  return {
    layout: point.layout,
    tokens: point.tokens,
    impl,
    mode,
    phases,
    rankMedianUs,
    bytes,
    gbps: { dispatch: d.gbps, combine: c.gbps },
    nvlinkFraction: { dispatch: d.fraction, combine: c.fraction },
    sms: impl === "nccl" ? null : max((r) => r.sms),
    memory: {
      deviceBytes: max((r) => r.deviceBytes),
      layoutBytes: max((r) => r.layoutBytes),
      deviceUsedBytes: max((r) => r.deviceUsedBytes),
    },
    errors: ranks.flatMap((r) => r.errors),
  };
}

/** How this library's and the baseline's rows are timed (runRankPoint, the baseline worker), in words. */
export function ownTiming(impl: "switchyard" | "nccl", mode: "graph" | "eager", steps: number): string {
  const how =
    impl === "nccl"
      ? "launched eagerly (its count exchange synchronises the host), CUDA events around dispatch and combine"
      : mode === "graph"
        ? "CUDA-graph replay of the step (one graph per input set), CUDA events between the four calls inside the graph"
        : "each call launched eagerly, CUDA events between the four calls";
  return `${how}; a device barrier before each step; per phase the slowest rank of each step, median over ${steps} steps`;
}

/** A point that could not be measured: no phases, the error kept. */
export function failedPoint(
  point: BenchPoint,
  impl: Impl,
  mode: "graph" | "eager",
  error: string,
): PointResult {
  return {
    layout: point.layout,
    tokens: point.tokens,
    impl,
    mode,
    phases: {},
    rankMedianUs: {},
    bytes: { dispatch: 0, combine: 0 },
    gbps: { dispatch: null, combine: null },
    nvlinkFraction: { dispatch: null, combine: null },
    sms: null,
    memory: { deviceBytes: 0, layoutBytes: endpointLayout(point.config).bytesPerRank, deviceUsedBytes: 0 },
    errors: [error],
  };
}
