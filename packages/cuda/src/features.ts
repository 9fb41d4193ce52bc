/**
 * Switches for what has not yet been proven on a GPU. The contiguous layout's kernels were written
 * and checked on the CPU (compiled, index arithmetic against core's reference) but never run on a
 * GPU: the backend declares and accepts that layout only with SWITCHYARD_CUDA_CONTIGUOUS=1, until
 * a device run passes the conformance suite with it (NOTES.md).
 */
export const CONTIGUOUS_ENV = "SWITCHYARD_CUDA_CONTIGUOUS";

export function contiguousEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[CONTIGUOUS_ENV] === "1";
}

/** Why a layout is refused here, or null when it may run. */
export function layoutRefusal(layout: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (layout === "masked") return null;
  if (layout === "contiguous") {
    return contiguousEnabled(env)
      ? null
      : `the contiguous layout (experimental, not yet run on a GPU: set ${CONTIGUOUS_ENV}=1 to use it)`;
  }
  return `the ${layout} layout`;
}

/**
 * Per-peer step counters (`Session.stats`, capability `stats`): the wait times come from stamps in
 * the receive kernels that have not run on a GPU yet, so the capability is declared (and the
 * kernels stamp) only with SWITCHYARD_CUDA_STATS=1. Without it `stats(rank)` still answers with
 * rows per peer and null waits.
 */
export const STATS_ENV = "SWITCHYARD_CUDA_STATS";

export function statsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[STATS_ENV] === "1";
}
