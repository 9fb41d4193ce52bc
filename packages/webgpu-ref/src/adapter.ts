import { BackendUnavailableError } from "@switchyard/core";
import { OPEN_TIMEOUT_MS, watchdog } from "./watchdog.js";

const SETUP_HINT =
  "on a machine without a GPU run `bash scripts/setup-vulkan.sh` as root (it installs Mesa's lavapipe, " +
  "a CPU Vulkan driver, Mesa >= 25); with a GPU, install its Vulkan driver";

/**
 * Asks `gpu` for an adapter and a device with the limits the backend needs, each request bounded
 * by `timeoutMs`: a failure, no adapter or a request that never answers is a BackendUnavailableError
 * saying which and what to do.
 */
export async function openAdapterAndDevice(
  gpu: GPU,
  timeoutMs = OPEN_TIMEOUT_MS,
): Promise<{ adapter: GPUAdapter; device: GPUDevice }> {
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await watchdog(
      gpu.requestAdapter({ powerPreference: "high-performance" }),
      timeoutMs,
      "open",
      "requestAdapter",
    );
  } catch (e) {
    throw new BackendUnavailableError(
      "webgpu",
      `requestAdapter failed: ${(e as Error).message}; ${SETUP_HINT}`,
    );
  }
  if (!adapter)
    throw new BackendUnavailableError(
      "webgpu",
      `no WebGPU adapter (Dawn found no Vulkan device); ${SETUP_HINT}`,
    );
  const want = adapter.limits;
  try {
    const device = await watchdog(
      adapter.requestDevice({
        requiredLimits: {
          maxStorageBufferBindingSize: want.maxStorageBufferBindingSize,
          maxBufferSize: want.maxBufferSize,
          maxStorageBuffersPerShaderStage: Math.min(want.maxStorageBuffersPerShaderStage, 10),
          maxComputeWorkgroupsPerDimension: want.maxComputeWorkgroupsPerDimension,
        },
      }),
      timeoutMs,
      "open",
      "requestDevice",
    );
    return { adapter, device };
  } catch (e) {
    throw new BackendUnavailableError("webgpu", `requestDevice failed: ${(e as Error).message}`);
  }
}
