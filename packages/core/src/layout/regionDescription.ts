import { type CombineWeights, combineWeightsOf } from "../combineWeights.js";
import type { EpConfig, LayoutKind } from "../config.js";
import type { Dtype } from "../dtype.js";
import type { RegionDtype } from "./region.js";
import type { LayoutSymbol } from "./symbols.js";

/** One extent of a shape: a symbol, or the product of two (`"R*M"`). */
export type Extent = LayoutSymbol | `${LayoutSymbol}*${LayoutSymbol}`;

/** A condition on the config: every field given must equal the config's (an empty one always holds). */
export interface RegionWhen {
  readonly layout?: LayoutKind;
  readonly combineWeights?: CombineWeights;
  readonly dispatchDtype?: Dtype;
}

/** Always (`true`), never (`false`), or where a condition holds. */
export type RegionCondition = boolean | RegionWhen;

/** A region's shape, axes and doc where `when` holds (a form without `when` fits every config). */
export interface RegionForm {
  readonly when?: RegionWhen;
  /** Extents, outermost first. */
  readonly shape: readonly Extent[];
  /** One name per extent. */
  readonly axes: readonly string[];
  readonly doc: string;
}

/**
 * One region of a rank's buffers, described once: every layout's offsets, the C layout's table
 * and the contract's names come from these.
 */
export interface RegionDescription {
  readonly name: string;
  /**
   * Position in REGION_NAMES: the parameter block's order, C's `sy_region_index`, the kernels'
   * `R_` enumerators. A new region takes the next free index, so the others keep theirs.
   */
  readonly index: number;
  /** Element type; `"dispatchDtype"`: the config's dispatch dtype. */
  readonly dtype: RegionDtype | "dispatchDtype";
  /** In the symmetric heap (peers write into it), else in the rank's local buffers. */
  readonly symmetric: RegionCondition;
  /** Where the region is placed at all (left out: always); elsewhere it is reported unused. */
  readonly usedWhen?: RegionWhen;
  /** Where the region is placed with shape [0] (its axes kept), e.g. scales without fp8. */
  readonly emptyWhen?: RegionWhen;
  /** The first form whose `when` holds gives the shape, axes and doc. */
  readonly forms: readonly RegionForm[];
}

/** How each field of a condition is read from the config. */
const WHEN_FIELDS: { readonly [F in keyof RegionWhen]-?: (c: Readonly<EpConfig>) => RegionWhen[F] } = {
  layout: (c) => c.layout,
  combineWeights: (c) => combineWeightsOf(c),
  dispatchDtype: (c) => c.dispatchDtype,
};

/** The fields a condition may name, in the order the generated C lists them. */
export const REGION_WHEN_FIELDS = Object.keys(WHEN_FIELDS) as readonly (keyof RegionWhen)[];

/** Whether `condition` holds for `config`. */
export function conditionHolds(condition: RegionCondition, config: Readonly<EpConfig>): boolean {
  if (typeof condition === "boolean") return condition;
  return REGION_WHEN_FIELDS.every(
    (f) => condition[f] === undefined || condition[f] === WHEN_FIELDS[f](config),
  );
}

/** The symbols of an extent: `"R*M"` -> `["R", "M"]`. */
export function extentFactors(extent: Extent): LayoutSymbol[] {
  return extent.split("*") as LayoutSymbol[];
}

/** The form of `region` that fits `config`; throws a RangeError naming the region when none does. */
export function regionFormOf(region: RegionDescription, config: Readonly<EpConfig>): RegionForm {
  const form = region.forms.find((f) => conditionHolds(f.when ?? true, config));
  if (form === undefined) {
    throw new RangeError(
      `regionFormOf: region ${region.name} has no form for layout ${config.layout}, combineWeights ${combineWeightsOf(config)}, dispatchDtype ${config.dispatchDtype}; add one to REGION_TABLE`,
    );
  }
  return form;
}
