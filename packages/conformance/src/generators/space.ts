import type { Capabilities, CombineWeights, Dtype, LayoutKind, ScaleFormat } from "@switchyard/core";

/** An (input dtype, dispatch dtype) pair a config can use. */
export interface DtypePair {
  readonly input: Dtype;
  readonly dispatch: Dtype;
}

export const DTYPE_PAIRS: readonly DtypePair[] = [
  { input: "bf16", dispatch: "bf16" },
  { input: "bf16", dispatch: "fp8-e4m3" },
  { input: "fp8-e4m3", dispatch: "fp8-e4m3" },
];

/** The ranges a generated config is drawn from: the suite's size limits cut down to the backend's. */
export interface ConfigSpace {
  readonly minRanks: number;
  readonly maxRanks: number;
  readonly maxLocalExperts: number;
  readonly maxExperts: number;
  readonly maxTopK: number;
  readonly maxTokens: number;
  /** hidden is always a multiple of this (the backend's hiddenMultiple). */
  readonly hiddenMultiple: number;
  /** Largest hidden for configs of any hidden (bf16 only); 0 when none fits. */
  readonly maxHiddenAny: number;
  /** Largest hidden for configs whose hidden is a multiple of 128 (needed by fp8); 0 when none fits. */
  readonly maxHiddenAligned: number;
  readonly dtypes: readonly DtypePair[];
  readonly layouts: readonly LayoutKind[];
  /** "single": dpSize 1; "any": any divisor of ranks; "groups": dpSize > 1. */
  readonly dp: "single" | "any" | "groups";
  readonly alignments: readonly number[];
  /**
   * fp8 configs' `scaleFormat`, drawn with equal odds; null leaves it out (pow2). `[null]` for a
   * backend that declares no `scaleFormats` beyond pow2: its configs then never carry the field.
   */
  readonly scaleFormats: readonly (ScaleFormat | null)[];
  /**
   * Masked configs' `combineWeights`, drawn with equal odds; null leaves it out (expert). `[null]`
   * for a backend that declares no mode beyond expert: its configs then never carry the field.
   */
  readonly combineWeights: readonly (CombineWeights | null)[];
}

/** What a property asks of the space beyond the defaults. */
export interface SpaceWants {
  layouts?: readonly LayoutKind[];
  dtypes?: readonly DtypePair[];
  dp?: "single" | "any" | "groups";
  minRanks?: number;
  /** Only these scale formats (default: left out, and every format the backend declares). */
  scaleFormats?: readonly ScaleFormat[];
  /**
   * Only these combine-weights modes (default: left out, and every mode the backend declares);
   * `expert` is drawn as the field left out.
   */
  combineWeights?: readonly CombineWeights[];
}

/** Sizes of the quick suite (CI) and of the deep one. */
export const SIZES = {
  quick: { ranks: 8, localExperts: 4, experts: 32, tokens: 16, hiddenAny: 300, hiddenAligned: 256 },
  deep: { ranks: 16, localExperts: 8, experts: 64, tokens: 48, hiddenAny: 1100, hiddenAligned: 768 },
} as const;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Largest multiple of `step` that is <= `max` (0 if none). */
function floorTo(max: number, step: number): number {
  return Math.floor(max / step) * step;
}

/**
 * The space a property draws configs from for a backend, or the reason there is none (the
 * property is then skipped with that reason).
 */
export function configSpace(
  caps: Capabilities,
  deep: boolean,
  wants: SpaceWants = {},
): { space: ConfigSpace } | { reason: string } {
  const size = deep ? SIZES.deep : SIZES.quick;
  const hm = Math.max(1, caps.hiddenMultiple);
  const alignedStep = (128 * hm) / gcd(128, hm);
  const maxHiddenAny = floorTo(Math.min(caps.maxHidden, size.hiddenAny), hm);
  const maxHiddenAligned = floorTo(Math.min(caps.maxHidden, size.hiddenAligned), alignedStep);
  const layouts = (wants.layouts ?? caps.layouts).filter((l) => caps.layouts.includes(l));
  if (layouts.length === 0) return { reason: `backend declares no ${wants.layouts?.join(" or ")} layout` };
  const dtypes = (wants.dtypes ?? DTYPE_PAIRS).filter(
    (p) =>
      caps.inputDtypes.includes(p.input) &&
      caps.dispatchDtypes.includes(p.dispatch) &&
      (p.dispatch === "bf16" ? maxHiddenAny > 0 : maxHiddenAligned > 0),
  );
  if (dtypes.length === 0) {
    const asked = (wants.dtypes ?? DTYPE_PAIRS).map((p) => `${p.input}->${p.dispatch}`).join(", ");
    return { reason: `backend declares no ${asked} dispatch (or no hidden size for it)` };
  }
  const dp = wants.dp ?? (caps.dpGroups ? "any" : "single");
  if (dp === "groups" && !caps.dpGroups) return { reason: "backend declares no DP groups" };
  const minRanks = Math.max(wants.minRanks ?? 1, dp === "groups" ? 2 : 1);
  const maxRanks = Math.min(caps.maxRanks, size.ranks);
  if (maxRanks < minRanks) return { reason: `needs ${minRanks} ranks, backend allows ${caps.maxRanks}` };
  if (caps.maxTopK < 1) return { reason: "backend allows no topK" };
  const declared = caps.scaleFormats ?? ["pow2"];
  const scaleFormats = wants.scaleFormats
    ? wants.scaleFormats.filter((f) => declared.includes(f))
    : [null, ...declared.filter((f) => declared.length > 1 || f !== "pow2")];
  if (scaleFormats.length === 0)
    return { reason: `backend declares no ${wants.scaleFormats?.join(" or ")} scale format` };
  const declaredModes = caps.combineWeights ?? ["expert"];
  // A property that wants expert only gets configs that leave the field out (expert by default).
  const combineWeights = wants.combineWeights
    ? wants.combineWeights.filter((m) => declaredModes.includes(m)).map((m) => (m === "expert" ? null : m))
    : [null, ...declaredModes.filter((m) => declaredModes.length > 1 || m !== "expert")];
  if (combineWeights.length === 0)
    return { reason: `backend declares no combineWeights ${wants.combineWeights?.join(" or ")}` };
  if (combineWeights.every((m) => m === "home") && !layouts.includes("masked"))
    return { reason: 'combineWeights "home" needs the masked layout, which the backend does not declare' };
  return {
    space: {
      minRanks,
      maxRanks,
      maxLocalExperts: size.localExperts,
      maxExperts: Math.max(size.experts, maxRanks),
      maxTopK: caps.maxTopK,
      maxTokens: size.tokens,
      hiddenMultiple: hm,
      maxHiddenAny,
      maxHiddenAligned,
      dtypes,
      layouts,
      dp,
      alignments: [1, 2, 3, 4, 8, 16],
      scaleFormats,
      combineWeights,
    },
  };
}
