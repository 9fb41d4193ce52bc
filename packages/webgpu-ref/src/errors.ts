import { SwitchyardError } from "@switchyard/core";

/**
 * WebGPU itself failed: a validation or out-of-memory error inside a call, a device loss, or GPU
 * work that never finished. `call` names the session call (e.g. "dispatchRecv(rank 2)").
 */
export class WebGpuError extends SwitchyardError {
  override name = "WebGpuError";
  constructor(
    readonly call: string,
    readonly kind: "validation" | "out-of-memory" | "internal" | "device-lost" | "timeout" | "map",
    detail: string,
  ) {
    super(`webgpu backend, ${call}: ${kind}: ${detail}`);
  }
}
