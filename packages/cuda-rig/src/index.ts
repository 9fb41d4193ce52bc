// @switchyard/cuda-rig: what tests and measures @switchyard/cuda. The world-level session adapter
// (the conformance suite's "cuda" backend: one worker process per rank), the launcher and pool, the
// GPU checks, the benchmark, the fault hooks and the fuzz drivers. The product lives in
// @switchyard/cuda.
export { cudaBackend, cudaCapabilities, cudaUnavailableReason } from "./backend.js";
export { BENCH_USAGE, type BenchOptions, parseBenchArgs } from "./bench/args.js";
export { BENCH_SCHEMA, type BenchReport, type PointResult } from "./bench/report.js";
export { type BenchHooks, type BenchIo, type RunBenchOptions, runBench } from "./bench/run.js";
export { renderSvg } from "./bench/svg.js";
export { type LaunchOptions, WorkerGroup, type WorkerSetup } from "./launcher.js";
export {
  type Design,
  deepseekConfig,
  type LayoutConstants,
  type Machine,
  type ModelConfig,
  type ModelLayout,
  type Prediction,
  predict,
  type Traffic,
  traffic,
} from "./model/costModel.js";
export { type FittedConstants, fit2gpu, fitResiduals, MEASURED_2GPU } from "./model/fit.js";
export { MULTI_HOST_MACHINE, report as costModelReport } from "./model/report.js";
export { expectedDistinctGroups, hitProbability } from "./model/routing.js";
export {
  backendOptionsFor,
  CUDA_VARIANTS,
  type CudaBackendOptions,
  cudaOptionsFromEnv,
  mergeCudaOptions,
  workerSetupOf,
} from "./options.js";
export { drainPool } from "./pool.js";
export { cudaVariant } from "./variant.js";
export {
  deserializeError,
  type SerializedError,
  serializeError,
  WorkerExitError,
  WorkerTimeoutError,
} from "./workerErrors.js";

import { cudaBackend } from "./backend.js";

/** The conformance CLI's provider hook (`--backend @switchyard/cuda-rig`): the backend with default options. */
export function createBackend() {
  return cudaBackend();
}
