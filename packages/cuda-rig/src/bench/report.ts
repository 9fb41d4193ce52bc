import type { Dtype, LayoutKind } from "@switchyard/core";
import type { PeerImpl, PeerState } from "./peers.js";
import type { Stats } from "./stats.js";

/**
 * The name and version of the report's JSON form (`schemas/bench-report.schema.json`), written as
 * `schema` into every report; the number is raised when a field changes meaning or goes (a new
 * optional field keeps it).
 */
export const BENCH_SCHEMA = "switchyard-bench/1";

/**
 * Which implementation a point measured: this library, the NCCL all-to-all baseline, or a peer
 * library (DeepEP V1's low-latency or normal kernels, pplx-kernels; see peers.ts).
 */
export type Impl = "switchyard" | "nccl" | PeerImpl;

/** Timed regions, in step order. The baseline has no separate halves (its dispatch blocks the host). */
export const PHASES = [
  "dispatchSend",
  "dispatchRecv",
  "dispatch",
  "combineSend",
  "combineRecv",
  "combine",
  "step",
] as const;
export type PhaseName = (typeof PHASES)[number];

/** What the GB/s figures count; written into every report. */
export const BYTES_COUNTED =
  "bytes a rank moves to other ranks in the phase (protocol version 2): dispatch = route records sent to other " +
  "ranks (one per token and destination rank) x (hidden x dispatch dtype bytes + hidden/128 x 4 scale bytes (fp8) " +
  "+ 4 x (2 + 4 min(topK, localExperts)) record bytes); combine = partials sent to other ranks (one per token and " +
  "home) x hidden x 2 (bf16). Rows to the rank itself are not counted. GB/s = the mean over ranks " +
  "of those bytes / the phase's median time (slowest rank of each step), 1 GB = 1e9 bytes; nvlinkFraction = GB/s / " +
  "the slowest rank's peer-write GB/s measured in the same run (16-byte stores into all peers at once).";

/** Memory of one rank for one point (the largest over ranks), bytes. */
export interface PointMemory {
  /** Device memory the endpoint (or baseline) allocated: symmetric heap, staging, local outputs, scratch. */
  deviceBytes: number;
  /** core's layout: symmetric + local bytes (what the layout asks for). */
  layoutBytes: number;
  /** cudaMemGetInfo used (total - free) with everything of the point allocated, NVSHMEM and NCCL included. */
  deviceUsedBytes: number;
}

export interface PointResult {
  layout: LayoutKind;
  tokens: number;
  impl: Impl;
  /** graph: CUDA graph replays; eager: launched every step (the baseline, which synchronises the host). */
  mode: "graph" | "eager";
  /** Per phase: stats over steps of the slowest rank's time (microseconds). */
  phases: Partial<Record<PhaseName, Stats>>;
  /** Per phase: each rank's median (microseconds). */
  rankMedianUs: Partial<Record<PhaseName, number[]>>;
  /** Mean over ranks of the bytes counted (BYTES_COUNTED), per step. */
  bytes: { dispatch: number; combine: number };
  gbps: { dispatch: number | null; combine: number | null };
  nvlinkFraction: { dispatch: number | null; combine: number | null };
  /** SMs the implementation's kernels may occupy (null: NCCL decides). */
  sms: number | null;
  memory: PointMemory;
  /** Problems found (counts differing from the routing, native errors); empty when clean. */
  errors: string[];
  /** How the phases were timed, in words. */
  timing?: string;
  /** What the reader must know to compare the row (a peer that does less work, a changed maximum). */
  notes?: string[];
}

export interface BenchReport {
  schema: typeof BENCH_SCHEMA;
  startedAt: string;
  finishedAt: string | null;
  command: string;
  device: { name: string | null; gpus: number; smCount: number | null };
  commit: string | null;
  config: {
    ranks: number;
    hidden: number;
    experts: number;
    topK: number;
    inputDtype: Dtype;
    dispatchDtype: Dtype;
    alignment: number;
  };
  options: {
    steps: number;
    warmup: number;
    rotate: number;
    seed: number;
    graphs: boolean;
    sms: number;
    baseline: boolean;
    /** How Switchyard's rows reach the other ranks: stores where NVSHMEM maps a peer ("auto"), or puts to every other rank ("put"). */
    transport?: "auto" | "put";
    /** true: each masked half launched its one kernel function (SWITCHYARD_CUDA_KERNEL_PER_HALF=1); absent: a kernel a stage. */
    kernelPerHalf?: boolean;
    /** --peers, expanded (absent in reports written before the peers were measured). */
    peers?: PeerImpl[];
  };
  nvlink: { peerWriteGBps: number[]; minGBps: number | null; bytesPerPeer: number };
  nccl: { version: number | null; available: boolean; reason: string | null };
  /** The peer libraries asked for (--peers), in the order they ran. */
  peers?: PeerState[];
  bytesCounted: string;
  points: PointResult[];
  notes: string[];
}

/** GB/s and the NVLink fraction from bytes and a median time in microseconds. */
export function bandwidth(bytes: number, medianUs: number | undefined, nvlinkGBps: number | null) {
  if (medianUs === undefined || !(medianUs > 0) || !(bytes > 0)) return { gbps: null, fraction: null };
  const gbps = bytes / (medianUs * 1e-6) / 1e9;
  return { gbps, fraction: nvlinkGBps && nvlinkGBps > 0 ? gbps / nvlinkGBps : null };
}
