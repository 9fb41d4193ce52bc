// The 2-GPU figures the cost model is fitted to, and the fit. Source: Switchyard's rows of
// packages/cuda/results/2026-11-25-peers (bench-2gpu.json, bench-2gpu-sms48.json,
// bench-2gpu-sms132.json): 2 × H100 over NVLink, hidden 7168, 256 experts, top-8, bf16 in,
// fp8-e4m3 dispatch, bf16 combine; medians of the slowest rank, µs. The test checks these
// numbers against the JSON files.
import {
  deepseekConfig,
  type LayoutConstants,
  type Machine,
  type ModelLayout,
  predict,
  traffic,
  transferUs,
} from "./costModel.js";

export interface MeasuredPoint {
  file: string;
  layout: ModelLayout;
  tokens: number;
  /** SMs the stage kernels ran on (masked grids: the whole GPU). */
  sms: number;
  /** NVLink peer-write GB/s measured in the same run (the slower rank). */
  nvlinkGBps: number;
  dispatchUs: number;
  combineUs: number;
}

const RUN = "bench-2gpu.json";
const NVL = 363.38388460361944;

export const MEASURED_2GPU: readonly MeasuredPoint[] = [
  { file: RUN, layout: "masked", tokens: 1, sms: 132, nvlinkGBps: NVL, dispatchUs: 32.992, combineUs: 37.6 },
  { file: RUN, layout: "masked", tokens: 8, sms: 132, nvlinkGBps: NVL, dispatchUs: 40.0, combineUs: 38.0 },
  { file: RUN, layout: "masked", tokens: 32, sms: 132, nvlinkGBps: NVL, dispatchUs: 41.2, combineUs: 39.2 },
  { file: RUN, layout: "masked", tokens: 128, sms: 132, nvlinkGBps: NVL, dispatchUs: 47.4, combineUs: 49.7 },
  {
    file: RUN,
    layout: "contiguous",
    tokens: 1024,
    sms: 24,
    nvlinkGBps: NVL,
    dispatchUs: 198.6,
    combineUs: 269.7,
  },
  {
    file: RUN,
    layout: "contiguous",
    tokens: 4096,
    sms: 24,
    nvlinkGBps: NVL,
    dispatchUs: 469.4,
    combineUs: 885.0,
  },
  {
    file: "bench-2gpu-sms48.json",
    layout: "contiguous",
    tokens: 4096,
    sms: 48,
    nvlinkGBps: 363.74314596353105,
    dispatchUs: 304.7,
    combineUs: 559.1,
  },
  {
    file: "bench-2gpu-sms132.json",
    layout: "contiguous",
    tokens: 4096,
    sms: 132,
    nvlinkGBps: 363.9135741689877,
    dispatchUs: 251.8,
    combineUs: 392.5,
  },
];

/** Fitted constants for both layouts. */
export interface FittedConstants {
  masked: LayoutConstants;
  contiguous: LayoutConstants;
}

/** Machine parameters for a one-host fit (no RDMA is used at 2 ranks; the values do not matter). */
export function oneHostMachine(nvlinkGBps: number): Machine {
  return {
    nvlinkGBps,
    rdmaGBps: 50,
    rdmaHopUs: 3,
    nvlinkPhaseUs: 2,
    forwardTablesUs: 4.8,
    forwardChunkTokens: 256,
  };
}

type Phase = "dispatch" | "combine";

function measuredOf(p: MeasuredPoint, phase: Phase): number {
  return phase === "dispatch" ? p.dispatchUs : p.combineUs;
}

/**
 * Least squares for y = fixed + x / rate over the contiguous points (x = SM bytes / SMs, after the
 * NVLink term is taken off), then the masked fixed latency as the mean residual with that rate.
 */
function fitPhase(
  points: readonly MeasuredPoint[],
  phase: Phase,
): { masked: number; contiguous: number; smGBps: number } {
  const rows = points.map((p) => {
    const t = traffic(deepseekConfig(p.tokens, 2, 8), "flat")[phase];
    return {
      p,
      y: measuredOf(p, phase) - transferUs(t.nvlinkBytes, p.nvlinkGBps),
      x: t.smBytes / p.sms / 1e3, // bytes per SM, in units of GB/s · µs
    };
  });
  const contiguous = rows.filter((r) => r.p.layout === "contiguous");
  const n = contiguous.length;
  const mx = contiguous.reduce((s, r) => s + r.x, 0) / n;
  const my = contiguous.reduce((s, r) => s + r.y, 0) / n;
  const sxy = contiguous.reduce((s, r) => s + (r.x - mx) * (r.y - my), 0);
  const sxx = contiguous.reduce((s, r) => s + (r.x - mx) ** 2, 0);
  const slope = sxy / sxx; // µs per (GB/s · µs) = 1 / (GB/s per SM)
  const fixedContiguous = my - slope * mx;
  const masked = rows.filter((r) => r.p.layout === "masked");
  const fixedMasked = masked.reduce((s, r) => s + (r.y - slope * r.x), 0) / masked.length;
  return { masked: fixedMasked, contiguous: fixedContiguous, smGBps: 1 / slope };
}

/** Fits the fixed per-phase latencies (per layout) and the per-SM rate (per phase) to the 2-GPU figures. */
export function fit2gpu(points: readonly MeasuredPoint[] = MEASURED_2GPU): FittedConstants {
  const d = fitPhase(points, "dispatch");
  const c = fitPhase(points, "combine");
  return {
    masked: {
      dispatch: { fixedUs: d.masked, smGBps: d.smGBps },
      combine: { fixedUs: c.masked, smGBps: c.smGBps },
    },
    contiguous: {
      dispatch: { fixedUs: d.contiguous, smGBps: d.smGBps },
      combine: { fixedUs: c.contiguous, smGBps: c.smGBps },
    },
  };
}

export interface FitRow {
  point: MeasuredPoint;
  dispatchUs: number;
  combineUs: number;
  /** (model − measured) / measured. */
  dispatchError: number;
  combineError: number;
}

/** The model at every measured point, with its relative error. */
export function fitResiduals(
  fitted: FittedConstants = fit2gpu(),
  points: readonly MeasuredPoint[] = MEASURED_2GPU,
): FitRow[] {
  return points.map((p) => {
    const m = predict(
      deepseekConfig(p.tokens, 2, 8),
      "flat",
      p.layout,
      oneHostMachine(p.nvlinkGBps),
      fitted[p.layout],
      p.sms,
    );
    return {
      point: p,
      dispatchUs: m.dispatch.totalUs,
      combineUs: m.combine.totalUs,
      dispatchError: (m.dispatch.totalUs - p.dispatchUs) / p.dispatchUs,
      combineError: (m.combine.totalUs - p.combineUs) / p.combineUs,
    };
  });
}
