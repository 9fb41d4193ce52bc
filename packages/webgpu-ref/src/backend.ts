import type { Backend, Capabilities, EpConfig } from "@switchyard/core";
import { deviceUnavailableReason } from "./device.js";
import { WEBGPU_OPTIONS } from "./options.js";
import { WebGpuSession, type WebGpuSessionOptions } from "./session.js";

/**
 * What this backend runs. Per-config limits of the device (a heap over maxBufferSize, a row over a
 * storage binding, a parameter over 2^32) are refused at createSession with UnsupportedError.
 */
const capabilities: Capabilities = Object.freeze({
  layouts: Object.freeze(["masked", "contiguous"] as const),
  inputDtypes: Object.freeze(["bf16", "fp8-e4m3"] as const),
  dispatchDtypes: Object.freeze(["bf16", "fp8-e4m3"] as const),
  maxRanks: 64,
  // a bf16 row (H * 2 bytes) and a route record fit any storage binding WebGPU guarantees (128 MiB)
  maxHidden: 1 << 16,
  maxTopK: 64,
  hiddenMultiple: 1,
  dpGroups: true,
  deterministicRowOrder: true,
  stats: true,
  ...WEBGPU_OPTIONS,
});

/** The protocol's stages as WGSL compute shaders, all ranks simulated on one WebGPU device (Dawn). */
export const webgpuBackend: Backend = Object.freeze({
  name: "webgpu",
  capabilities,
  unavailableReason: () => deviceUnavailableReason(),
  createSession: (config: EpConfig, options?: WebGpuSessionOptions) => WebGpuSession.create(config, options),
});

/** The backend (for `switchyard --backend <module>`, which looks for `createBackend()`). */
export function createBackend(): Backend {
  return webgpuBackend;
}

/** null when a WebGPU device can be had here, else why not and what to do. Never throws. */
export function unavailableReason(): Promise<string | null> {
  return deviceUnavailableReason();
}
