import type { EpConfig } from "@switchyard/core";

/**
 * The rank-input rules as `RankInput`'s documentation states them, written out again: the rank
 * is an integer in [0, ranks); x is Uint16Array (bf16) or Uint8Array (fp8) of T*hidden; topkIdx
 * Int32Array of T*topK with T <= maxTokensPerRank; topkWeights Float32Array of T*topK, all finite;
 * ids in [-1, experts), none twice in a token; fp8 input has Float32Array scales of T*hidden/128,
 * bf16 input none, and with scaleFormat ue8m0 every scale is 2^k for an integer k in [-127, 127].
 * Returns the tensors at fault, by the names `InputError.what` uses ("rank",
 * "input", "x", "scales", "topkIdx", "topkWeights", "tokens"); empty when the call is valid.
 */
export function inputProblems(config: EpConfig, rank: unknown, input: unknown): Set<string> {
  const bad = new Set<string>();
  if (typeof rank !== "number" || !Number.isInteger(rank) || rank < 0 || rank >= config.ranks) {
    bad.add("rank");
    return bad;
  }
  if (input === null || typeof input !== "object") {
    bad.add("input");
    return bad;
  }
  const { x, scales, topkIdx, topkWeights } = input as Record<string, unknown>;
  const K = config.topK;
  const H = config.hidden;
  const fp8 = config.inputDtype === "fp8-e4m3";
  const idx = topkIdx instanceof Int32Array ? topkIdx : null;
  const w = topkWeights instanceof Float32Array ? topkWeights : null;
  if (!idx) bad.add("topkIdx");
  if (!w) bad.add("topkWeights");
  const xOk = fp8 ? x instanceof Uint8Array : x instanceof Uint16Array;
  if (!xOk) bad.add("x");
  if (fp8 ? !(scales instanceof Float32Array) : scales !== undefined) bad.add("scales");
  if (!idx) return bad;
  if (idx.length % K !== 0) {
    bad.add("topkIdx");
    return bad;
  }
  const T = idx.length / K;
  if (T > config.maxTokensPerRank) bad.add("tokens");
  if (w && w.length !== T * K) bad.add("topkWeights");
  if (xOk && (x as ArrayLike<number>).length !== T * H) bad.add("x");
  if (fp8 && scales instanceof Float32Array && scales.length !== (T * H) / 128) bad.add("scales");
  if (fp8 && scales instanceof Float32Array && config.scaleFormat === "ue8m0") {
    const powers = Array.from({ length: 255 }, (_, i) => 2 ** (i - 127));
    if (!scales.every((s) => powers.includes(s))) bad.add("scales");
  }
  for (let t = 0; t < T; t++) {
    for (let k = 0; k < K; k++) {
      const e = idx[t * K + k];
      if (e < -1 || e >= config.experts) bad.add("topkIdx");
      if (e >= 0 && idx.subarray(t * K, t * K + k).includes(e)) bad.add("topkIdx");
      if (w && t * K + k < w.length && !Number.isFinite(w[t * K + k])) bad.add("topkWeights");
    }
  }
  return bad;
}

/** Whether `rank` names a rank of the world. */
export function rankOk(config: EpConfig, rank: unknown): boolean {
  return typeof rank === "number" && Number.isInteger(rank) && rank >= 0 && rank < config.ranks;
}
