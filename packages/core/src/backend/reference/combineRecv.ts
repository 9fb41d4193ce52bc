import { ProtocolError } from "../../errors.js";
import { combineToken } from "../../reference/combine.js";
import { type RankInput, tokensOf } from "../../tensors.js";
import { readSignal, type StepContext } from "./context.js";

const STAGE = "combine recv";

/**
 * Combine receive on `rank`: checks every expert rank's signal and that the rows they announce
 * add up to this rank's used slots, then sums the K slot rows of each token with the router's
 * weights (fp32, slot order) and rounds once to bf16. Returns y [T, hidden].
 */
export function combineRecv(ctx: StepContext, rank: number, input: RankInput): Uint16Array {
  const { config, heaps, epoch } = ctx;
  const K = config.topK;
  const H = config.hidden;
  const T = tokensOf(config, input);
  const sig = heaps[rank].u32("combineSignal");
  let received = 0;
  for (let peer = 0; peer < config.ranks; peer++) {
    const max = config.maxTokensPerRank * K;
    received += readSignal(sig[peer], { rank, stage: STAGE, region: "combineSignal", peer, epoch, max });
  }
  let expected = 0;
  for (let i = 0; i < T * K; i++) if (input.topkIdx[i] >= 0) expected++;
  if (received !== expected) {
    throw new ProtocolError(
      rank,
      STAGE,
      "combineSignal",
      `expert ranks announced ${received} rows, this rank's tokens use ${expected} slots`,
    );
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
  return y;
}
