import { type EpConfig, type ScaleFormat, scaleFormatOf, UnsupportedError } from "@switchyard/core";

/**
 * The fp8 scale formats the kernels compute: pow2 only (power-of-two fp32 scales, core's
 * codec/blockScale.ts). The amax and ue8m0 formats are specified in core but the kernels do not
 * compute them yet, so capabilities declare pow2 alone and every entry point refuses the others.
 */
export const CUDA_SCALE_FORMATS: readonly ScaleFormat[] = Object.freeze(["pow2"] as const);

/**
 * Throws UnsupportedError naming the config's scaleFormat unless the kernels compute it. Called
 * by `RankEndpoint.create` and the session adapter before anything is allocated.
 */
export function checkScaleFormat(config: Pick<EpConfig, "scaleFormat">): void {
  const format = scaleFormatOf(config);
  if (!CUDA_SCALE_FORMATS.includes(format)) {
    throw new UnsupportedError(
      "cuda",
      `scaleFormat "${format}" (EpConfig.scaleFormat): its kernels compute fp8 block scales in the pow2 format only; leave scaleFormat out or set it to "pow2", or use the reference backend for ${format}`,
    );
  }
}
