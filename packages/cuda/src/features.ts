import { type LayoutKind, UnsupportedError } from "@switchyard/core";

/**
 * The layouts this backend runs: both passed the conformance suite on GPUs (contiguous at 2 and
 * 4 ranks, results/2026-11-21-v1), so both are declared in capabilities and accepted by
 * `createSession` and `RankEndpoint.create`.
 */
export const CUDA_LAYOUTS: readonly LayoutKind[] = Object.freeze(["masked", "contiguous"] as const);

/**
 * Throws UnsupportedError naming the layout unless this backend runs it. core's `validateConfig`
 * already refuses layouts it does not know; this keeps a layout core adds later from reaching
 * kernels that were never written for it.
 */
export function checkLayout(layout: string): void {
  if (!(CUDA_LAYOUTS as readonly string[]).includes(layout)) {
    throw new UnsupportedError("cuda", `the ${layout} layout`);
  }
}
