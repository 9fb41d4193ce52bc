import {
  COMBINE_WEIGHTS_CODES,
  type CombineWeights,
  type Dtype,
  type EpConfig,
  type LayoutKind,
  SCALE_FORMAT_CODES,
  type ScaleFormat,
} from "@switchyard/core";
import fc from "fast-check";

const DTYPE_CODES: Record<Dtype, number> = { bf16: 0, "fp8-e4m3": 1 };
const LAYOUT_CODES: Record<LayoutKind, number> = { masked: 0, contiguous: 1 };

/** One config as a line of sy_layout_cli's input (its twelve integers, in its order). */
export function configLine(c: EpConfig): string {
  return [
    c.ranks,
    c.dpSize,
    c.experts,
    c.topK,
    c.hidden,
    c.maxTokensPerRank,
    c.expertAlignment,
    DTYPE_CODES[c.inputDtype],
    DTYPE_CODES[c.dispatchDtype],
    LAYOUT_CODES[c.layout],
    SCALE_FORMAT_CODES[c.scaleFormat ?? "pow2"],
    COMBINE_WEIGHTS_CODES[c.combineWeights ?? "expert"],
  ].join(" ");
}

/** Small values most of the time, the whole valid range now and then. */
const sized = (small: number, max: number) =>
  fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: small }), weight: 8 },
    { arbitrary: fc.integer({ min: 1, max }), weight: 1 },
  );

/** Valid configs over every option: both layouts, the three dtype pairs, DP groups, alignment. */
export const validConfig: fc.Arbitrary<EpConfig> = fc
  .record({
    ranks: fc.oneof(fc.constantFrom(1, 2, 4, 8), sized(64, 4096)),
    localExperts: sized(64, 1 << 12),
    dpPick: fc.nat(),
    topKPick: fc.nat(),
    hiddenUnits: sized(64, 1 << 13),
    hiddenOdd: sized(4096, 1 << 20),
    maxTokensPerRank: sized(512, (1 << 21) - 2),
    expertAlignment: fc.oneof(fc.constantFrom(1, 16, 64, 128), sized(256, 1 << 16)),
    dtypes: fc.constantFrom<[Dtype, Dtype]>(["bf16", "bf16"], ["bf16", "fp8-e4m3"], ["fp8-e4m3", "fp8-e4m3"]),
    layout: fc.constantFrom<LayoutKind>("masked", "contiguous"),
    scaleFormat: fc.constantFrom<ScaleFormat | undefined>(undefined, "pow2", "amax", "ue8m0"),
    combineWeights: fc.constantFrom<CombineWeights | undefined>(undefined, "expert", "home"),
  })
  .map((r) => {
    const ranks = r.ranks;
    const experts = Math.min(r.localExperts, Math.floor((1 << 20) / ranks)) * ranks;
    const divisors = Array.from({ length: ranks }, (_, i) => i + 1).filter((d) => ranks % d === 0);
    const fp8 = r.dtypes[1] === "fp8-e4m3";
    return {
      ranks,
      dpSize: divisors[r.dpPick % divisors.length] as number,
      experts,
      topK: (r.topKPick % Math.min(experts, r.topKPick % 3 === 0 ? experts : 16)) + 1,
      hidden: fp8
        ? Math.min(r.hiddenUnits * 128, 1 << 20)
        : r.hiddenUnits % 2
          ? r.hiddenOdd
          : r.hiddenUnits * 64,
      maxTokensPerRank: r.maxTokensPerRank,
      inputDtype: r.dtypes[0],
      dispatchDtype: r.dtypes[1],
      layout: r.layout,
      expertAlignment: r.expertAlignment,
      ...(fp8 && r.scaleFormat !== undefined ? { scaleFormat: r.scaleFormat } : {}),
      ...(r.layout === "masked" && r.combineWeights !== undefined
        ? { combineWeights: r.combineWeights }
        : {}),
    } satisfies EpConfig;
  });

const INT_FIELDS = [
  "ranks",
  "dpSize",
  "experts",
  "topK",
  "hidden",
  "maxTokensPerRank",
  "expertAlignment",
] as const;

/**
 * Configs that break a rule: one integer field set to anything in [-4, 2^22 + 4] (zero, negative,
 * past its maximum, not a divisor, not a multiple), fp8 input with bf16 dispatch, a scale format
 * with bf16 dispatch, or weights at home with the contiguous layout. Some turn out valid; the test
 * compares whatever core says.
 */
export const brokenConfig: fc.Arbitrary<EpConfig> = fc
  .tuple(
    validConfig,
    fc.constantFrom(...INT_FIELDS, "dtypes" as const, "scaleFormat" as const, "combineWeights" as const),
    fc.oneof(fc.integer({ min: -4, max: 4 }), fc.integer({ min: -4, max: (1 << 22) + 4 })),
  )
  .map(([c, field, value]): EpConfig => {
    if (field === "dtypes") return { ...c, inputDtype: "fp8-e4m3", dispatchDtype: "bf16" };
    if (field === "scaleFormat")
      return { ...c, inputDtype: "bf16", dispatchDtype: "bf16", scaleFormat: "amax" };
    if (field === "combineWeights") return { ...c, layout: "contiguous", combineWeights: "home" };
    return { ...c, [field]: value };
  });
