import {
  type NativeRuntimeOptions,
  type OutputMode,
  parseOutputMode,
  RANKS_PER_GPU_ENV,
  ranksPerGpu,
  runtimeOptionsFromEnv,
} from "@switchyard/cuda";
import type { WorkerSetup } from "./launcher.js";

/**
 * How `cudaBackend(options)` runs its sessions. Every field is explicit: nothing here or below it
 * reads the environment (command lines turn their variables into these with `cudaOptionsFromEnv`).
 */
export interface CudaBackendOptions {
  /** Contiguous layout: "exact" hands each step's rows over in buffers of their size (RankEndpoint's `output`); default "worst-case". */
  output?: OutputMode;
  /** Ranks (NVSHMEM PEs) sharing one GPU; default 1. Two share it by time slices, four want an MPS daemon. */
  ranksPerGpu?: number;
  /** The library's runtime choices: transport, pointer checks, the contiguous copy kernels' blocks. */
  runtime?: NativeRuntimeOptions;
}

/**
 * The named variants `switchyard conformance --backend cuda:<variant>` runs (with the options
 * from the environment underneath): the protocol's optional paths, each a whole backend.
 */
export const CUDA_VARIANTS: Readonly<Record<string, CudaBackendOptions>> = Object.freeze({
  exact: { output: "exact" },
  "no-pointer-checks": { runtime: { pointerChecks: false } },
  "blocks-1": { runtime: { contiguousBlocks: 1 } },
  "2-per-gpu": { ranksPerGpu: 2 },
  "kernel-per-half": { runtime: { kernelPerHalf: true } },
});

/** `base` with `over` on top (runtime options merged field by field). */
export function mergeCudaOptions(base: CudaBackendOptions, over: CudaBackendOptions): CudaBackendOptions {
  return { ...base, ...over, runtime: { ...base.runtime, ...over.runtime } };
}

/**
 * For command-line entry points only: the backend options their environment asks for.
 * SWITCHYARD_CUDA_OUTPUT (worst-case | exact), SWITCHYARD_CUDA_RANKS_PER_GPU,
 * SWITCHYARD_TRANSPORT, SWITCHYARD_CUDA_POINTER_CHECKS, SWITCHYARD_CONTIGUOUS_BLOCKS,
 * SWITCHYARD_CUDA_KERNEL_PER_HALF. Throws `RangeError` naming a variable whose value is not valid.
 */
export function cudaOptionsFromEnv(env: NodeJS.ProcessEnv): CudaBackendOptions {
  const o: CudaBackendOptions = { runtime: runtimeOptionsFromEnv(env) };
  const output = parseOutputMode(env.SWITCHYARD_CUDA_OUTPUT);
  if (output !== undefined) o.output = output;
  if (env[RANKS_PER_GPU_ENV] !== undefined) o.ranksPerGpu = ranksPerGpu(env);
  return o;
}

/** How sessions of `cudaBackend(options)` start their workers: its ranks per GPU and runtime options. */
export function workerSetupOf(options: CudaBackendOptions): WorkerSetup {
  return { ranksPerGpu: options.ranksPerGpu, native: options.runtime };
}

/** Backend options whose sessions start their workers as `workers` says (a runner's cudaBackend). */
export function backendOptionsFor(workers: WorkerSetup = {}): CudaBackendOptions {
  return { ranksPerGpu: workers.ranksPerGpu, runtime: workers.native };
}
