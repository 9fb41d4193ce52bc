import { REGION_TABLE } from "./regionTable.js";

/** Element type of a region, for its documented shape. */
export type RegionDtype = "u32" | "i32" | "f32" | "bf16" | "fp8-e4m3";

export const REGION_DTYPE_BYTES: Record<RegionDtype, number> = {
  u32: 4,
  i32: 4,
  f32: 4,
  bf16: 2,
  "fp8-e4m3": 1,
};

/** Every region starts at a multiple of this many bytes (wide vector stores and WebGPU binding offsets). */
export const REGION_ALIGN = 256;

/**
 * One named block of a rank's buffers.
 * `symmetric` regions live in the symmetric heap (peers write into them); the others are local.
 */
export interface Region {
  readonly name: RegionName;
  /** Byte offset from the start of its heap (symmetric or local). */
  readonly offset: number;
  /** Size in bytes (0 where the config does not use the region, e.g. scales without fp8). */
  readonly bytes: number;
  readonly align: number;
  readonly dtype: RegionDtype;
  /** Shape in elements, outermost first; `bytes = product(shape) * dtypeBytes`. */
  readonly shape: readonly number[];
  /** The names of the shape's axes, outermost first. */
  readonly axes: readonly string[];
  readonly symmetric: boolean;
  readonly doc: string;
}

/** The name of a region of REGION_TABLE. */
export type RegionName = (typeof REGION_TABLE)[number]["name"];

/**
 * Every region name any layout uses, in the fixed order of the parameter block (each region's
 * `index` in REGION_TABLE). A layout that does not use a region reports it with 0 bytes.
 */
export const REGION_NAMES: readonly RegionName[] = Object.freeze(regionNamesByIndex());

function regionNamesByIndex(): RegionName[] {
  const names: RegionName[] = [];
  for (const r of REGION_TABLE) {
    if (!Number.isInteger(r.index) || r.index < 0 || r.index >= REGION_TABLE.length || names[r.index]) {
      throw new RangeError(
        `REGION_TABLE: ${r.name} has index ${r.index}; the indices must be 0..${REGION_TABLE.length - 1}, each once`,
      );
    }
    names[r.index] = r.name;
  }
  return names;
}

export interface RegionSpec {
  name: RegionName;
  dtype: RegionDtype;
  shape: number[];
  axes: string[];
  symmetric: boolean;
  doc: string;
}

/** Places regions one after another, each aligned, in two heaps (symmetric and local). */
export function placeRegions(specs: RegionSpec[]): {
  regions: Region[];
  symmetricBytes: number;
  localBytes: number;
} {
  let sym = 0;
  let local = 0;
  const regions: Region[] = [];
  for (const spec of specs) {
    const bytes = spec.shape.reduce((a, b) => a * b, 1) * REGION_DTYPE_BYTES[spec.dtype];
    const cursor = spec.symmetric ? sym : local;
    const offset = alignUp(cursor, REGION_ALIGN);
    regions.push(
      Object.freeze({
        ...spec,
        shape: Object.freeze([...spec.shape]),
        axes: Object.freeze([...spec.axes]),
        offset,
        bytes,
        align: REGION_ALIGN,
      }),
    );
    if (spec.symmetric) sym = offset + bytes;
    else local = offset + bytes;
  }
  return { regions, symmetricBytes: alignUp(sym, REGION_ALIGN), localBytes: alignUp(local, REGION_ALIGN) };
}

export function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}
