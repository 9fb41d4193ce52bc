import { type EpConfig, type ScaleFormat, scaleFormatOf, UnsupportedError } from "@switchyard/core";

/**
 * The fp8 scale formats the kernels compute (payload.cuh's quantize16): pow2 and ue8m0 (the same
 * power-of-two fp32 scale, core's codec/blockScale.ts; ue8m0 names the format a caller packs its
 * exponent bytes from) and amax (amax / 448 in fp32, core's codec/amaxScale.ts).
 */
export const CUDA_SCALE_FORMATS: readonly ScaleFormat[] = Object.freeze(["pow2", "amax", "ue8m0"] as const);

/**
 * Throws UnsupportedError naming the config's scaleFormat unless the kernels compute it. Called
 * by `RankEndpoint.create` and the session adapter before anything is allocated.
 */
export function checkScaleFormat(config: Pick<EpConfig, "scaleFormat">): void {
  const format = scaleFormatOf(config);
  if (!CUDA_SCALE_FORMATS.includes(format)) {
    throw new UnsupportedError(
      "cuda",
      `scaleFormat "${format}" (EpConfig.scaleFormat): its kernels compute ${CUDA_SCALE_FORMATS.join(", ")}; use one of them, or the reference backend for ${format}`,
    );
  }
}
