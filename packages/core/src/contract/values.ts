import type { ScaleFormat } from "../codec/scaleFormat.js";
import type { CombineWeights } from "../combineWeights.js";
import type { LayoutKind } from "../config.js";
import type { Dtype } from "../dtype.js";
import type { RegionDtype } from "../layout/region.js";

/** The C ABI's codes of wire element types (`sy_dtype`, sy_config.input_dtype / dispatch_dtype). */
export const DTYPE_CODES: Readonly<Record<Dtype, number>> = Object.freeze({ bf16: 0, "fp8-e4m3": 1 });

/** The C ABI's codes of layouts (`sy_layout_kind`, sy_config.layout). */
export const LAYOUT_KIND_CODES: Readonly<Record<LayoutKind, number>> = Object.freeze({
  masked: 0,
  contiguous: 1,
});

/** The C ABI's codes of region element types (`sy_region_dtype`, sy_region.dtype). */
export const REGION_DTYPE_CODES: Readonly<Record<RegionDtype, number>> = Object.freeze({
  u32: 0,
  i32: 1,
  f32: 2,
  bf16: 3,
  "fp8-e4m3": 4,
});

/** The C ABI's codes of fp8 block-scale formats (`sy_scale_format`, sy_config.scale_format; parameter scaleFormat). */
export const SCALE_FORMAT_CODES: Readonly<Record<ScaleFormat, number>> = Object.freeze({
  pow2: 0,
  amax: 1,
  ue8m0: 2,
});

/** The C ABI's codes of where combine applies the router weights (`sy_combine_weights`, sy_config.combine_weights). */
export const COMBINE_WEIGHTS_CODES: Readonly<Record<CombineWeights, number>> = Object.freeze({
  expert: 0,
  home: 1,
});
