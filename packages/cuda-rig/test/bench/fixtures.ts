import { defineConfig } from "@switchyard/core";
import type { BenchPoint } from "../../src/bench/plan.js";
import type { RankPointResult } from "../../src/bench/rankPoint.js";
import {
  BENCH_SCHEMA,
  type BenchReport,
  BYTES_COUNTED,
  PHASES,
  type PhaseName,
} from "../../src/bench/report.js";

/** A bench point of the DeepSeek-like config at `tokens` per rank on 4 ranks. */
export function point(layout: "masked" | "contiguous", tokens: number): BenchPoint {
  return {
    layout,
    tokens,
    config: defineConfig({
      ranks: 4,
      experts: 256,
      topK: 8,
      hidden: 7168,
      maxTokensPerRank: tokens,
      dispatchDtype: "fp8-e4m3",
      layout,
      expertAlignment: layout === "contiguous" ? 128 : 1,
    }),
  };
}

/** Synthetic per-rank samples: phase p of step i on rank r takes base * (1 + r / 10) + i % 3 microseconds. */
export function rankResults(
  base: number,
  steps = 10,
  ranks = 4,
  phases: readonly PhaseName[] = PHASES,
): RankPointResult[] {
  return Array.from({ length: ranks }, (_, r) => ({
    rank: r,
    samplesUs: Object.fromEntries(
      phases.map((p, j) => [
        p,
        Array.from({ length: steps }, (_, i) => base * (j + 1) * (1 + r / 10) + (i % 3)),
      ]),
    ),
    remoteDispatchBytes: 1e6 * (r + 1),
    remoteCombineBytes: 2e6 * (r + 1),
    deviceBytes: 300e6 + r,
    layoutBytes: 290e6,
    deviceUsedBytes: 5e9,
    sms: 24,
    errors: [],
  }));
}

export function emptyReport(): BenchReport {
  return {
    schema: BENCH_SCHEMA,
    startedAt: "2026-11-22T00:00:00.000Z",
    finishedAt: null,
    command: "switchyard bench",
    device: { name: "NVIDIA H200", gpus: 4, smCount: 132 },
    commit: "abc123",
    config: {
      ranks: 4,
      hidden: 7168,
      experts: 256,
      topK: 8,
      inputDtype: "bf16",
      dispatchDtype: "fp8-e4m3",
      alignment: 128,
    },
    options: { steps: 10, warmup: 2, rotate: 2, seed: 1, graphs: true, sms: 24, baseline: true },
    nvlink: { peerWriteGBps: [354, 355, 356, 350], minGBps: 350, bytesPerPeer: 256 * 2 ** 20 },
    nccl: { version: 22805, available: true, reason: null },
    bytesCounted: BYTES_COUNTED,
    points: [],
    notes: [],
  };
}
