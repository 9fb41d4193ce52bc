/**
 * How fp8-e4m3 dispatch stores its per-128-element block scales (`EpConfig.scaleFormat`).
 * The formats follow the three DeepEP offers its callers (docs/protocol.md, "fp8 block scales"):
 *
 * - `pow2`: a power of two 2^s in fp32, s the smallest exponent with amax <= 448 * 2^s (blockScale.ts).
 * - `amax`: fp32 amax / 448 with a reciprocal multiply and an amax floor (amaxScale.ts).
 * - `ue8m0`: the same 2^s as `pow2`, whose 8-bit biased exponent s + 127 is the scale (ue8m0.ts);
 *   packed four per int32 by `packUe8m0Scales`.
 */
export type ScaleFormat = "pow2" | "amax" | "ue8m0";

export const SCALE_FORMATS: readonly ScaleFormat[] = ["pow2", "amax", "ue8m0"];

/** The format of a config that leaves `scaleFormat` out. */
export const DEFAULT_SCALE_FORMAT: ScaleFormat = "pow2";

/** A config's scale format: its `scaleFormat`, or `pow2` when left out. */
export function scaleFormatOf(config: { scaleFormat?: ScaleFormat }): ScaleFormat {
  return config.scaleFormat ?? DEFAULT_SCALE_FORMAT;
}
