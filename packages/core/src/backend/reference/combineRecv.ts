import { ProtocolError } from "../../errors.js";
import { blockPlacement } from "../../placement.js";
import { combineToken } from "../../reference/combine.js";
import { type RankInput, tokensOf } from "../../tensors.js";
import { readSignal, type StepContext } from "./context.js";

const STAGE = "combine recv";

/**
 * Combine receive on `rank`: checks every expert rank's signal, then that each expert rank
 * announces exactly the rows this rank's tokens route to it (its used slots naming one of that
 * rank's experts), then sums the K slot rows of each token with the router's weights (fp32, slot
 * order) and rounds once to bf16. Returns y [T, hidden] and the rows each expert rank announced.
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
  const T = tokensOf(config, input);
  const sig = heaps[rank].u32("combineSignal");
  const received = new Int32Array(R);
  for (let peer = 0; peer < R; peer++) {
    const max = config.maxTokensPerRank * K;
    received[peer] = readSignal(sig[peer], {
      rank,
      stage: STAGE,
      region: "combineSignal",
      peer,
      epoch,
      max,
    });
  }
  const placement = blockPlacement(config);
  const expected = new Int32Array(R);
  for (let i = 0; i < T * K; i++) if (input.topkIdx[i] >= 0) expected[placement.rankOf(input.topkIdx[i])]++;
  for (let peer = 0; peer < R; peer++) {
    if (received[peer] !== expected[peer]) {
      throw new ProtocolError(
        rank,
        STAGE,
        "combineSignal",
        `expert rank ${peer} announced ${received[peer]} rows, this rank's tokens route ${expected[peer]} slots to it`,
        peer,
      );
    }
  }
  const rows = heaps[rank].elems("combineX") as Uint16Array;
  const y = new Uint16Array(T * H);
  for (let t = 0; t < T; t++) {
    const idx = input.topkIdx.subarray(t * K, (t + 1) * K);
    const w = input.topkWeights.subarray(t * K, (t + 1) * K);
    y.set(
      combineToken(H, idx, w, (k) => rows.subarray((t * K + k) * H, (t * K + k + 1) * H)),
      t * H,
    );
  }
  return { y, received };
}
