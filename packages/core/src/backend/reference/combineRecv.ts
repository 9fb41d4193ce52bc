import { combineWeightsOf } from "../../combineWeights.js";
import { ProtocolError } from "../../errors.js";
import { blockPlacement } from "../../placement.js";
import { combineTokenAtHome, slotsByRank, sumPartials } from "../../reference/combine.js";
import { type DispatchInput, tokensOf } from "../../tensors.js";
import { readSignal, type StepContext } from "./context.js";

const STAGE = "combine recv";

/**
 * Combine receive on `rank` (docs/protocol.md): checks every expert rank's signal and that it
 * announces exactly the tokens of this rank that route to it (tokens with a used slot naming one
 * of its experts). With `combineWeights` `expert` it then sums each token's partials in ascending
 * rank order in fp32 and rounds once to bf16; with `home` it weights each used slot's row
 * combineX[t][k] with `weights[t][k]` and sums them in ascending slot order in fp32, rounding once
 * (`combineTokenAtHome`). Returns y [T, hidden] and the rows each expert rank sent this rank
 * (partials, or (token, slot) rows).
 */
export function combineRecv(
  ctx: StepContext,
  rank: number,
  input: DispatchInput,
  weights?: Float32Array,
): { y: Uint16Array; received: Int32Array } {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const K = config.topK;
  const H = config.hidden;
  const M = config.maxTokensPerRank;
  const T = tokensOf(config, input);
  const sig = heaps[rank].u32("combineSignal");
  const announced = new Int32Array(R);
  for (let peer = 0; peer < R; peer++) {
    announced[peer] = readSignal(sig[peer], {
      rank,
      stage: STAGE,
      region: "combineSignal",
      peer,
      epoch,
      max: M,
    });
  }
  const home = combineWeightsOf(config) === "home";
  const placement = blockPlacement(config);
  const routed = Array.from({ length: T }, (_, t) =>
    slotsByRank(input.topkIdx.subarray(t * K, (t + 1) * K), placement.rankOf),
  );
  const expected = new Int32Array(R);
  const rows = new Int32Array(R);
  for (const ranks of routed)
    for (const [r, slots] of ranks) {
      expected[r]++;
      rows[r] += slots.length;
    }
  for (let peer = 0; peer < R; peer++) {
    if (announced[peer] !== expected[peer]) {
      throw new ProtocolError(
        rank,
        STAGE,
        "combineSignal",
        `expert rank ${peer} announced ${announced[peer]} ${home ? "tokens" : "partials"}, ${expected[peer]} of this rank's tokens route to it`,
        peer,
      );
    }
  }
  const combineX = heaps[rank].elems("combineX") as Uint16Array;
  const y = new Uint16Array(T * H);
  if (home) {
    for (let t = 0; t < T; t++) {
      const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
      const w = weights!.subarray(t * K, (t + 1) * K);
      const at = (k: number) => combineX.subarray((t * K + k) * H, (t * K + k + 1) * H);
      y.set(combineTokenAtHome(H, idx, w, at), t * H);
    }
    return { y, received: rows };
  }
  routed.forEach((ranks, t) => {
    const partials = ranks.map(([r]) => combineX.subarray((r * M + t) * H, (r * M + t + 1) * H));
    y.set(sumPartials(H, partials), t * H);
  });
  return { y, received: expected };
}
