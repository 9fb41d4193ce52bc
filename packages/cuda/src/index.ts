// @switchyard/cuda: the product. The native binding (loader and typed surface), the runtime, the
// in-process RankEndpoint with its device tensors, start from a launcher's environment (rendezvous
// over TCP), the named errors, and the layout the kernels read. The world-level session adapter,
// workers, checks, bench and fuzzers live in @switchyard/cuda-rig.

export {
  type CombineRecvArgs,
  type DeviceAddress,
  type DeviceRef,
  type DispatchSendArgs,
  type EndpointOptions,
  type EndpointStats,
  RankEndpoint,
  type RecvIntoArgs,
  readDispatchResult,
} from "./endpoint.js";
export {
  DEFAULT_COLLECTIVE_TIMEOUT_MS,
  type EnvStartOptions,
  type LaunchEnv,
  parseLaunchEnv,
  startFromEnv,
} from "./envStart.js";
export {
  BAD_INPUT_CODE,
  badInputError,
  mapNativeError,
  NativeError,
  type NativeThrown,
  STAGE_NAMES,
} from "./errors.js";
export { CUDA_LAYOUTS, checkLayout } from "./features.js";
export { devicesFor, RANKS_PER_GPU_ENV, ranksPerGpu, visibleGpuCount } from "./gpus.js";
export { endpointLayout } from "./layout.js";
export {
  ADDON_FILE,
  addonCandidates,
  type LoadResult,
  loadNative,
  PACKAGE_DIR,
  requireNative,
  tryLoad,
} from "./native/loader.js";
export type * from "./native/types.js";
export { CUDA_OPTIONS, checkOptions } from "./options.js";
export { OUTPUT_ENV, type OutputMode, outputModeFor, parseOutputMode } from "./output.js";
export { packParams } from "./params.js";
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
