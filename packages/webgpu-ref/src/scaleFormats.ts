import { type EpConfig, type ScaleFormat, scaleFormatOf, UnsupportedError } from "@switchyard/core";

/**
 * The fp8 scale formats the WGSL quantise stage computes. pow2 and ue8m0 share the exponent rule
 * (shaders/fp8.wgsl); ue8m0 scales sit in the layout's fp32 slots as 2^s, the same bits pow2
 * writes, and `packUe8m0Scales` packs them. The amax format (a correctly rounded fp32 division
 * per block) is not written in WGSL yet, so it is refused.
 */
export const WEBGPU_SCALE_FORMATS: readonly ScaleFormat[] = Object.freeze(["pow2", "ue8m0"] as const);

/** Throws UnsupportedError naming the config's scaleFormat unless the WGSL stages compute it. */
export function checkScaleFormat(config: Pick<EpConfig, "scaleFormat">): void {
  const format = scaleFormatOf(config);
  if (!WEBGPU_SCALE_FORMATS.includes(format)) {
    throw new UnsupportedError(
      "webgpu",
      `scaleFormat "${format}" (EpConfig.scaleFormat): its WGSL quantise stage computes ${WEBGPU_SCALE_FORMATS.join(" and ")} only; set scaleFormat to one of those, or use the reference backend for ${format}`,
    );
  }
}
