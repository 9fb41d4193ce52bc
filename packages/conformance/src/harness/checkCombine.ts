import {
  bf16ToNumber,
  blockPlacement,
  combineWeightsOf,
  type EpConfig,
  type ExpertOutputOf,
  ownerOf,
  type RankInput,
  referenceCombine,
  slotsByRank,
} from "@switchyard/core";
import { combineBound, homeCombineBound } from "../bounds.js";
import { type Problems, typeName } from "./problems.js";

/** Checks a combined output's type and length: y [T, hidden] as Uint16Array. */
export function checkCombineShape(
  config: EpConfig,
  rank: number,
  input: RankInput,
  y: Uint16Array,
  problems: Problems,
): boolean {
  const T = input.topkIdx.length / config.topK;
  if (!(y instanceof Uint16Array) || y.length !== T * config.hidden) {
    problems.add(
      `rank ${rank} combine output is ${typeName(y)}${y ? ` of length ${y.length}` : ""}, ` +
        `expected Uint16Array [T, hidden] = [${T}, ${config.hidden}]`,
    );
    return false;
  }
  return true;
}

/**
 * Checks every rank's combined output against the float64 weighted sum of the expert outputs the
 * specification names (`outputOf`), within `combineBound`, or `homeCombineBound` with
 * `combineWeights: "home"` (see bounds.ts).
 */
export function checkCombine(
  config: EpConfig,
  inputs: RankInput[],
  ys: Uint16Array[],
  outputOf: ExpertOutputOf,
  problems: Problems,
): void {
  const K = config.topK;
  const H = config.hidden;
  const placement = blockPlacement(config);
  const home = combineWeightsOf(config) === "home";
  inputs.forEach((input, rank) => {
    const y = ys[rank];
    if (!checkCombineShape(config, rank, input, y, problems)) return;
    const T = input.topkIdx.length / K;
    for (let t = 0; t < T; t++) {
      const src = ownerOf(config, rank, t);
      // The used slots grouped by the rank hosting their expert: one group per partial.
      const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
      const ranks = slotsByRank(idx, placement.rankOf).map(([, slots]) =>
        slots.map((k) => ({ w: input.topkWeights[t * K + k], o: outputOf(idx[k], src, t, k) })),
      );
      const used = ranks.reduce((n, terms) => n + terms.length, 0);
      for (let h = 0; h < H; h++) {
        let exact = 0;
        let abs = 0;
        let partialAbs = 0;
        for (const terms of ranks) {
          let partial = 0;
          for (const { w, o } of terms) {
            const p = w * bf16ToNumber(o[h]);
            partial += p;
            abs += Math.abs(p);
          }
          exact += partial;
          partialAbs += Math.abs(partial);
        }
        const got = bf16ToNumber(y[t * H + h]);
        const bound = home
          ? homeCombineBound(exact, abs, used)
          : combineBound(exact, abs, used, partialAbs, ranks.length);
        if (!(Math.abs(got - exact) <= bound)) {
          problems.add(
            `rank ${rank} token ${t} element ${h}: y = ${got}, expected ${exact} ` +
              `(|error| ${Math.abs(got - exact).toExponential(3)} > bound ${bound.toExponential(3)}, ` +
              `${used} used slot(s) on ${ranks.length} rank(s)${home ? ", weights at home" : ""})`,
          );
          break;
        }
      }
    }
  });
}

/** bf16 bits and value, the sign of zero shown: `0x8000 = -0`. */
function bitsAndValue(bits: number): string {
  const v = bf16ToNumber(bits);
  return `0x${bits.toString(16).padStart(4, "0")} = ${Object.is(v, -0) ? "-0" : v}`;
}

/**
 * Checks every rank's combined output bit for bit against core's `referenceCombine`: partials per
 * expert rank in slot order, rounded to bf16, summed at home in ascending rank order in fp32 and
 * rounded once (docs/protocol.md). The uint16 patterns are compared, so +0 and -0 differ (and
 * NaNs are compared by payload). Reports the first differing element of each token.
 */
export function checkCombineExact(
  config: EpConfig,
  inputs: RankInput[],
  ys: Uint16Array[],
  outputOf: ExpertOutputOf,
  problems: Problems,
): void {
  const H = config.hidden;
  const home = combineWeightsOf(config) === "home";
  const want = referenceCombine(config, inputs, outputOf);
  inputs.forEach((input, rank) => {
    const y = ys[rank];
    if (!checkCombineShape(config, rank, input, y, problems)) return;
    for (let i = 0; i < y.length; i++) {
      if (y[i] === want[rank][i]) continue;
      const t = Math.floor(i / H);
      problems.add(
        `rank ${rank} token ${t} element ${i % H}: y bits ${bitsAndValue(y[i])}, ` +
          `the protocol's order gives ${bitsAndValue(want[rank][i])} ` +
          (home
            ? "(weights at home: every used slot's w * row in ascending slot order in one fp32 sum from +0, rounded once)"
            : "(partials per expert rank in slot order from +0, rounded to bf16, summed from +0 in ascending rank order)"),
      );
      i = (t + 1) * H - 1;
    }
  });
}
