import type { Backend } from "@switchyard/core";
import { cudaBackend } from "./backend.js";
import { CUDA_VARIANTS, type CudaBackendOptions, mergeCudaOptions } from "./options.js";

/**
 * The backend `--backend cuda` or `--backend cuda:<variant>` names: `base` (what the command
 * line's environment asked for) with the variant's options of CUDA_VARIANTS on top, named
 * `cuda:<variant>` in reports. An unknown variant is a `RangeError` listing the known ones.
 */
export function cudaVariant(variant: string | undefined, base: CudaBackendOptions = {}): Backend {
  if (variant === undefined) return cudaBackend(base);
  if (!Object.hasOwn(CUDA_VARIANTS, variant)) {
    const known = Object.keys(CUDA_VARIANTS).join(", ");
    throw new RangeError(`backend cuda has no variant "${variant}": the variants are ${known}`);
  }
  return cudaBackend(mergeCudaOptions(base, CUDA_VARIANTS[variant]), `cuda:${variant}`);
}
