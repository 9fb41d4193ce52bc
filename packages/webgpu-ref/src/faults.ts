/**
 * Fault codes the receive kernels write into the status words (the same numbers reach WGSL as
 * FAULT_* constants through the generated header, see shaders.ts).
 */
export const FAULT = {
  /** A signal word is 0: never written. */
  MISSING: 1,
  /** A signal word carries another step's epoch. */
  STALE: 2,
  /** A signal word's count field is 0 (count + 1 is never 0). */
  MALFORMED: 3,
  /** A signal word counts more rows than its region holds. */
  TOO_MANY: 4,
  /** contiguous: a source's per-expert counts do not add up to its announced total. */
  SUM: 5,
  /** combine send: a dispatch signal word changed after dispatch receive checked it (late or duplicated). */
  CHANGED: 6,
  /** combine send: a delivered row's meta names a rank, token or slot outside the world. */
  META: 7,
  /** combine recv: an expert rank announces another number of rows than this rank's used slots route to it. */
  ROWS: 8,
} as const;

/** The status key when nothing is wrong. */
export const NONE = 0xffffffff;
/** gsrc marks padding rows with this bit (the low bits hold the local expert). */
export const PAD = 0x80000000;
/** Keys of meta faults start here (key = META_KEY + delivered row index). */
export const META_KEY = 0x40000000;
