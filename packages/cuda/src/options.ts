import { type DeclaredOptions, type EpConfig, refuseUndeclared } from "@switchyard/core";

/**
 * The optional modes the kernels run (the rig's capabilities declare the same lists):
 * - scale formats (payload.cuh's quantize16): pow2 and ue8m0 (the same power-of-two fp32 scale;
 *   ue8m0 names the format a caller packs its exponent bytes from) and amax (amax / 448 in fp32);
 * - combine weights: `expert` (combine send writes one weighted partial per (token, rank), combine
 *   recv sums them in rank order) and `home` (combine send copies one unweighted row per (token,
 *   slot), combine recv weights and sums them in slot order; masked layout only, as core rules).
 */
export const CUDA_OPTIONS: DeclaredOptions = Object.freeze({
  scaleFormats: Object.freeze(["pow2", "amax", "ue8m0"] as const),
  combineWeights: Object.freeze(["expert", "home"] as const),
});

/** UnsupportedError unless the kernels run the config's modes; before anything is allocated. */
export function checkOptions(config: Pick<EpConfig, "scaleFormat" | "combineWeights">): void {
  refuseUndeclared("cuda", CUDA_OPTIONS, config);
}
