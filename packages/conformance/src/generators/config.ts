import { defineConfig, type EpConfig } from "@switchyard/core";
import fc from "fast-check";
import type { ConfigSpace } from "./space.js";

function divisors(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
}

export interface ConfigOptions {
  /**
   * The fewest slots one token can have on one rank, J = min(topK, local experts) (default 1):
   * configs then have at least this many local experts and this topK, and few enough ranks for
   * that. The space must allow it (`maxTopK` and `maxLocalExperts` at least this much).
   */
  minSlotsPerRank?: number;
}

/**
 * Valid configs drawn from `space`. Every choice is an independent integer or constant mapped onto
 * the config, so shrinking walks towards 1 rank, 1 expert, K = 1, small hidden, masked, bf16.
 * Reach: 1..maxRanks ranks, DP groups (dpSize any divisor), K from 1 to the largest the config
 * allows (K = experts), hidden multiples and non-multiples of 128, both layouts, bf16 / fp8
 * (quantise-on-dispatch and fp8 input), expertAlignment 1 and > 1, and for fp8 dispatch the
 * space's scale formats (the field is drawn only when the space holds more than leaving it out),
 * and for masked configs the space's combine-weights modes (drawn likewise).
 */
export function configArb(space: ConfigSpace, options: ConfigOptions = {}): fc.Arbitrary<Readonly<EpConfig>> {
  const j = options.minSlotsPerRank ?? 1;
  const maxRanks = Math.max(space.minRanks, Math.min(space.maxRanks, Math.floor(space.maxExperts / j)));
  const formats = space.scaleFormats;
  const drawFormat = formats.length > 1 || formats[0] !== null;
  const modes = space.combineWeights;
  const drawMode = modes.length > 1 || modes[0] !== null;
  return fc
    .record({
      ...(drawFormat ? { scaleFormat: fc.constantFrom(...formats) } : {}),
      ...(drawMode ? { combineWeights: fc.constantFrom(...modes) } : {}),
      ranks: fc.integer({ min: space.minRanks, max: maxRanks }),
      dpPick: fc.nat({ max: 7 }),
      localExperts: fc.integer({ min: Math.min(j, space.maxLocalExperts), max: space.maxLocalExperts }),
      topK: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: j, max: Math.max(j, 8) }) },
        { weight: 1, arbitrary: fc.constant(Number.MAX_SAFE_INTEGER) },
        { weight: 1, arbitrary: fc.integer({ min: j, max: Math.max(j, 64) }) },
      ),
      maxTokensPerRank: fc.integer({ min: 1, max: space.maxTokens }),
      // bf16 end to end twice as often as each fp8 pair (the fp8 properties cover those on their own).
      dtypes: fc.oneof(
        ...space.dtypes.map((p) => ({ weight: p.dispatch === "bf16" ? 2 : 1, arbitrary: fc.constant(p) })),
      ),
      aligned: fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))),
      hiddenAny: fc.integer({ min: 1, max: Math.max(1, space.maxHiddenAny / space.hiddenMultiple) }),
      hiddenAligned: fc.integer({ min: 1, max: Math.max(1, space.maxHiddenAligned / alignedStep(space)) }),
      layout: fc.constantFrom(...space.layouts),
      expertAlignment: fc.constantFrom(...space.alignments),
    })
    .map((c) => {
      const ranks = c.ranks;
      let dps = space.dp === "single" ? [1] : divisors(ranks);
      if (space.dp === "groups") dps = dps.filter((d) => d > 1);
      const dpSize = dps[c.dpPick % dps.length];
      const L = Math.max(1, Math.min(c.localExperts, Math.floor(space.maxExperts / ranks)));
      const experts = ranks * L;
      const topK = Math.min(c.topK, experts, space.maxTopK);
      const fp8 = c.dtypes.dispatch === "fp8-e4m3";
      const useAligned = fp8 || space.maxHiddenAny === 0 || (c.aligned && space.maxHiddenAligned > 0);
      const hidden = useAligned ? c.hiddenAligned * alignedStep(space) : c.hiddenAny * space.hiddenMultiple;
      return defineConfig({
        ranks,
        dpSize,
        experts,
        topK,
        hidden,
        maxTokensPerRank: c.maxTokensPerRank,
        inputDtype: c.dtypes.input,
        dispatchDtype: c.dtypes.dispatch,
        layout: c.layout,
        expertAlignment: c.expertAlignment,
        ...(fp8 && c.scaleFormat ? { scaleFormat: c.scaleFormat } : {}),
        // combineWeights "home" is masked-only: a contiguous config leaves it out.
        ...(c.combineWeights && (c.combineWeights !== "home" || c.layout === "masked")
          ? { combineWeights: c.combineWeights }
          : {}),
      });
    });
}

/** The step between hidden sizes that are multiples of both 128 and the backend's hiddenMultiple. */
export function alignedStep(space: ConfigSpace): number {
  let a = 128;
  let b = space.hiddenMultiple;
  while (b) [a, b] = [b, a % b];
  return (128 * space.hiddenMultiple) / a;
}

/**
 * A one-line summary of a config, e.g. `R4 dp2 E8 K3 H200 M7 bf16->fp8-e4m3 masked a1`
 * (`->fp8-e4m3/amax` with a scale format, `masked/home-weights` with combineWeights home).
 */
export function describeConfig(c: EpConfig): string {
  return (
    `R${c.ranks} dp${c.dpSize} E${c.experts} K${c.topK} H${c.hidden} M${c.maxTokensPerRank} ` +
    `${c.inputDtype}->${c.dispatchDtype}${c.scaleFormat ? `/${c.scaleFormat}` : ""} ${c.layout}${c.combineWeights === "home" ? "/home-weights" : ""} a${c.expertAlignment}`
  );
}
