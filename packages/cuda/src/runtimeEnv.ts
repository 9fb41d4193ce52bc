import type { NativeRuntimeOptions } from "./native/types.js";

/**
 * The runtime options a command-line process takes from its environment (the library reads none
 * itself): `SWITCHYARD_TRANSPORT=put`, `SWITCHYARD_CUDA_POINTER_CHECKS=0`,
 * `SWITCHYARD_CONTIGUOUS_BLOCKS=<n>`, `SWITCHYARD_CUDA_KERNEL_PER_HALF=1` (or 0). Unset variables
 * leave the library's defaults. Throws `RangeError` naming SWITCHYARD_CUDA_KERNEL_PER_HALF when it
 * is neither 0 nor 1.
 */
export function runtimeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NativeRuntimeOptions {
  const options: NativeRuntimeOptions = {};
  // As the library read it before: "put" forces puts, any other value is the default.
  if (env.SWITCHYARD_TRANSPORT !== undefined) {
    options.transport = env.SWITCHYARD_TRANSPORT === "put" ? "put" : "auto";
  }
  if (env.SWITCHYARD_CUDA_POINTER_CHECKS !== undefined) {
    options.pointerChecks = env.SWITCHYARD_CUDA_POINTER_CHECKS !== "0";
  }
  const blocks = env.SWITCHYARD_CONTIGUOUS_BLOCKS;
  if (blocks !== undefined && blocks !== "") {
    const n = Number(blocks);
    // The library's rule before: anything below 1 means the default.
    options.contiguousBlocks = Number.isInteger(n) && n >= 1 ? n : 0;
  }
  const perHalf = env.SWITCHYARD_CUDA_KERNEL_PER_HALF;
  if (perHalf !== undefined && perHalf !== "") {
    if (perHalf !== "0" && perHalf !== "1") {
      throw new RangeError(
        `SWITCHYARD_CUDA_KERNEL_PER_HALF=${JSON.stringify(perHalf)}: expected 1 (each half of dispatch and combine launches its one kernel function) or 0 (a kernel a stage, the default); unset it or pick one`,
      );
    }
    options.kernelPerHalf = perHalf === "1";
  }
  return options;
}
