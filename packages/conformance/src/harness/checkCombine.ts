import { bf16ToNumber, type EpConfig, type ExpertOutputOf, ownerOf, type RankInput } from "@switchyard/core";
import { combineBound } from "../bounds.js";
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
 * specification names (`outputOf`), within `combineBound` (see bounds.ts).
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
  inputs.forEach((input, rank) => {
    const y = ys[rank];
    if (!checkCombineShape(config, rank, input, y, problems)) return;
    const T = input.topkIdx.length / K;
    for (let t = 0; t < T; t++) {
      const src = ownerOf(config, rank, t);
      const slots: { w: number; o: Uint16Array }[] = [];
      for (let k = 0; k < K; k++) {
        const e = input.topkIdx[t * K + k];
        if (e >= 0) slots.push({ w: input.topkWeights[t * K + k], o: outputOf(e, src, t, k) });
      }
      for (let h = 0; h < H; h++) {
        let exact = 0;
        let abs = 0;
        for (const { w, o } of slots) {
          const p = w * bf16ToNumber(o[h]);
          exact += p;
          abs += Math.abs(p);
        }
        const got = bf16ToNumber(y[t * H + h]);
        const bound = combineBound(exact, abs, slots.length);
        if (!(Math.abs(got - exact) <= bound)) {
          problems.add(
            `rank ${rank} token ${t} element ${h}: y = ${got}, expected ${exact} ` +
              `(|error| ${Math.abs(got - exact).toExponential(3)} > bound ${bound.toExponential(3)}, ` +
              `${slots.length} used slot(s))`,
          );
          break;
        }
      }
    }
  });
}
