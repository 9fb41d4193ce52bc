import { type DeclaredOptions, type EpConfig, refuseUndeclared } from "@switchyard/core";

/**
 * The optional modes the WGSL stages run (the backend's capabilities declare the same lists):
 * - scale formats: pow2 and ue8m0 share the exponent rule (shaders/fp8.wgsl; ue8m0 scales sit in
 *   the layout's fp32 slots as 2^s, the bits pow2 writes, and `packUe8m0Scales` packs them). amax
 *   needs a correctly rounded fp32 division per block and products per element, which WGSL's `/`
 *   and `*` do not promise: shaders/f32_exact.wgsl computes them with integer operations.
 * - combine weights: `expert` (combine_send.wgsl writes one weighted partial per (token, rank),
 *   combine_recv.wgsl sums them in rank order) and `home` (every (token, slot) row unweighted,
 *   weighted at combineRecv with the weights passed to it and summed in slot order).
 */
export const WEBGPU_OPTIONS: DeclaredOptions = Object.freeze({
  scaleFormats: Object.freeze(["pow2", "amax", "ue8m0"] as const),
  combineWeights: Object.freeze(["expert", "home"] as const),
});

/** UnsupportedError unless the WGSL stages run the config's modes; before a device is asked for. */
export function checkOptions(config: Pick<EpConfig, "scaleFormat" | "combineWeights">): void {
  refuseUndeclared("webgpu", WEBGPU_OPTIONS, config);
}
