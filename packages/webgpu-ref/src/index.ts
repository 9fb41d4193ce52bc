export { createBackend, unavailableReason, webgpuBackend } from "./backend.js";
export { WebGpuError } from "./errors.js";
export type { WebGpuSessionOptions } from "./session.js";
