export { cudaBackend, cudaCapabilities, cudaUnavailableReason } from "./backend.js";
export { BENCH_USAGE, type BenchOptions, parseBenchArgs } from "./bench/args.js";
export type { BenchReport, PointResult } from "./bench/report.js";
export { type BenchIo, runBench } from "./bench/run.js";
export { renderSvg } from "./bench/svg.js";
export {
  type CombineRecvArgs,
  type DeviceAddress,
  type DeviceRef,
  type DispatchSendArgs,
  type EndpointOptions,
  type EndpointStats,
  RankEndpoint,
  type RecvIntoArgs,
} from "./endpoint.js";
export {
  DEFAULT_COLLECTIVE_TIMEOUT_MS,
  type EnvStartOptions,
  type LaunchEnv,
  parseLaunchEnv,
  startFromEnv,
} from "./envStart.js";
export { mapNativeError, NativeError, WorkerExitError, WorkerTimeoutError } from "./errors.js";
export { visibleGpuCount } from "./gpus.js";
export { type LaunchOptions, WorkerGroup } from "./launcher.js";
export { endpointLayout } from "./layout.js";
export { loadNative } from "./native/loader.js";
export type * from "./native/types.js";
export { OUTPUT_ENV, type OutputMode, outputModeFor } from "./output.js";
export { packParams } from "./params.js";
export { drainPool } from "./pool.js";
export {
  type FetchOptions,
  fetchUniqueId,
  RendezvousError,
  type ServeOptions,
  serveUniqueId,
  type UniqueIdServer,
} from "./rendezvous.js";
export { CudaRuntime, getUniqueId, type RuntimeOptions, UNIQUE_ID_BYTES } from "./runtime.js";
export { runtimeOptionsFromEnv } from "./runtimeEnv.js";
export { DeviceTensor } from "./tensor.js";

import { cudaBackend } from "./backend.js";

/** The conformance CLI's provider hook: `--backend @switchyard/cuda`. */
export const backend = cudaBackend;
export function create() {
  return cudaBackend;
}
export default cudaBackend;
