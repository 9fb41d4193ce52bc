import { ProtocolError } from "../../errors.js";
import { blockPlacement } from "../../placement.js";
import { slotsByRank, sumPartials } from "../../reference/combine.js";
import { type RankInput, tokensOf } from "../../tensors.js";
import { readSignal, type StepContext } from "./context.js";

const STAGE = "combine recv";

/**
 * Combine receive on `rank` (docs/protocol.md): checks every expert rank's signal and that it
 * announces exactly the partials this rank's tokens route to it (tokens with a used slot naming
 * one of its experts), then sums each token's partials in ascending rank order in fp32 and rounds
 * once to bf16. Returns y [T, hidden] and the partials each expert rank announced.
 */
export function combineRecv(
  ctx: StepContext,
  rank: number,
  input: RankInput,
): { y: Uint16Array; received: Int32Array } {
  const { config, heaps, epoch } = ctx;
  const R = config.ranks;
  const K = config.topK;
  const H = config.hidden;
  const M = config.maxTokensPerRank;
  const T = tokensOf(config, input);
  const sig = heaps[rank].u32("combineSignal");
  const received = new Int32Array(R);
  for (let peer = 0; peer < R; peer++) {
    received[peer] = readSignal(sig[peer], {
      rank,
      stage: STAGE,
      region: "combineSignal",
      peer,
      epoch,
      max: M,
    });
  }
  const placement = blockPlacement(config);
  const routed = Array.from({ length: T }, (_, t) =>
    slotsByRank(input.topkIdx.subarray(t * K, (t + 1) * K), placement.rankOf),
  );
  const expected = new Int32Array(R);
  for (const ranks of routed) for (const [r] of ranks) expected[r]++;
  for (let peer = 0; peer < R; peer++) {
    if (received[peer] !== expected[peer]) {
      throw new ProtocolError(
        rank,
        STAGE,
        "combineSignal",
        `expert rank ${peer} announced ${received[peer]} partials, ${expected[peer]} of this rank's tokens route to it`,
        peer,
      );
    }
  }
  const partials = heaps[rank].elems("combineX") as Uint16Array;
  const y = new Uint16Array(T * H);
  routed.forEach((ranks, t) => {
    const rows = ranks.map(([r]) => partials.subarray((r * M + t) * H, (r * M + t + 1) * H));
    y.set(sumPartials(H, rows), t * H);
  });
  return { y, received };
}
