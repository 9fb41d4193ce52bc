import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";

let cached: number | null = null;

/**
 * GPUs this process may use, without touching CUDA: CUDA_VISIBLE_DEVICES when set, else the
 * driver's /proc entries, else `nvidia-smi -L`; 0 when none answers.
 */
export function visibleGpuCount(env: NodeJS.ProcessEnv = process.env): number {
  if (env === process.env && cached !== null) return cached;
  const n = countGpus(env);
  if (env === process.env) cached = n;
  return n;
}

function countGpus(env: NodeJS.ProcessEnv): number {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined) {
    const ids = visible.split(",").filter((s) => s.trim() !== "" && !s.trim().startsWith("-"));
    return ids.length;
  }
  try {
    const n = readdirSync("/proc/driver/nvidia/gpus").length;
    if (n > 0) return n;
  } catch {
    // no driver entries
  }
  try {
    const out = execFileSync("nvidia-smi", ["-L"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.split("\n").filter((l) => l.startsWith("GPU ")).length;
  } catch {
    return 0;
  }
}

/** Environment switch of the command-line tools: ranks (NVSHMEM PEs) per GPU, default 1. */
export const RANKS_PER_GPU_ENV = "SWITCHYARD_CUDA_RANKS_PER_GPU";

/**
 * For command lines: ranks that share one GPU from `env` (SWITCHYARD_CUDA_RANKS_PER_GPU, a whole
 * number >= 1), else 1. The library itself never reads it. Several
 * ranks on one GPU is chosen explicitly: 2 PEs share it by time slices; 4 need an MPS daemon.
 */
export function ranksPerGpu(env: NodeJS.ProcessEnv): number {
  const v = env[RANKS_PER_GPU_ENV];
  if (v === undefined || v === "") return 1;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`${RANKS_PER_GPU_ENV}=${v}: must be a whole number >= 1 (ranks sharing one GPU)`);
  return n;
}

/** Device of each of `ranks` ranks with `perGpu` ranks per GPU: rank / perGpu, rounded down. */
export function devicesFor(ranks: number, perGpu: number): number[] {
  return Array.from({ length: ranks }, (_, r) => Math.floor(r / Math.max(1, perGpu)));
}
