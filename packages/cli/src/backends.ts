import { type Backend, referenceBackend } from "@switchyard/core";

/**
 * The project's backends that `--backend` knows by name. Each entry names its package and loads
 * it with `import()` of that literal name, only when asked for: the backends are optional
 * dependencies of this package (Dawn or a CUDA build may be missing where the command runs), so a
 * backend that cannot load turns into an unavailable backend with the reason instead of a CLI that
 * cannot start. Nothing imports this package back: the graph is cli -> conformance -> core and
 * cli -> backend -> core.
 */
export interface NamedBackend {
  /** The package the backend lives in. */
  readonly package: string;
  /** The backend; `variant` is the part after `name:` in `--backend name:variant`, or undefined. */
  load(variant: string | undefined): Promise<Backend>;
}

export const NAMED_BACKENDS: Readonly<Record<string, NamedBackend>> = Object.freeze({
  reference: {
    package: "@switchyard/core",
    load: async (variant: string | undefined) => {
      noVariants("reference", variant);
      return referenceBackend;
    },
  },
  webgpu: {
    package: "@switchyard/webgpu-ref",
    load: async (variant: string | undefined) => {
      noVariants("webgpu", variant);
      return (await import("@switchyard/webgpu-ref")).webgpuBackend;
    },
  },
  cuda: {
    package: "@switchyard/cuda-rig",
    load: async (variant: string | undefined) => {
      const rig = await import("@switchyard/cuda-rig");
      const options = cudaOptions(rig);
      try {
        return rig.cudaVariant(variant, options);
      } catch (e) {
        if (e instanceof RangeError) throw new UnknownVariantError(e.message);
        throw e;
      }
    },
  },
});

/**
 * The rig's options from this process's environment (SWITCHYARD_CUDA_OUTPUT,
 * SWITCHYARD_CUDA_RANKS_PER_GPU, SWITCHYARD_TRANSPORT, SWITCHYARD_CUDA_POINTER_CHECKS,
 * SWITCHYARD_CONTIGUOUS_BLOCKS, SWITCHYARD_CUDA_KERNEL_PER_HALF), handed to the cuda backend and to the bench. The command line is
 * where environment variables are read; the backends and the bench take options.
 */
export function cudaOptions(rig: typeof import("@switchyard/cuda-rig")) {
  return rig.cudaOptionsFromEnv(process.env);
}

function noVariants(name: string, variant: string | undefined): void {
  if (variant !== undefined) throw new UnknownVariantError(`backend ${name} has no variant "${variant}"`);
}

/** A `--backend name:variant` whose variant the backend does not have. */
export class UnknownVariantError extends Error {
  override name = "UsageError";
}
