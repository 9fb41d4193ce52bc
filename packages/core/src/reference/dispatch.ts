import { quantizeRows } from "../codec/blockScale.js";
import { scaleFormatOf } from "../codec/scaleFormat.js";
import { type EpConfig, scalesPerRow } from "../config.js";
import { blockPlacement } from "../placement.js";
import { ownerOf } from "../rows.js";
import { type RankInput, tokensOf } from "../tensors.js";

/** A row as the semantics define it: which token, which slot, and its payload in the dispatch dtype. */
export interface ReferenceRow {
  srcRank: number;
  srcToken: number;
  slot: number;
  /** [hidden] dispatch-dtype bits. */
  x: Uint16Array | Uint8Array;
  /** [hidden / 128] fp32 scales (fp8 dispatch), else null. */
  scales: Float32Array | null;
}

/** `rows[rank][localExpert]`: the rows each local expert receives, ordered by (srcRank, srcToken). */
export type ReferenceDispatch = ReferenceRow[][][];

/** The payload a rank sends, in the dispatch dtype: passthrough, or quantised to fp8 with core's codec in the config's scale format. */
export function dispatchPayload(
  config: EpConfig,
  input: Pick<RankInput, "x" | "scales">,
): { x: Uint16Array | Uint8Array; scales: Float32Array | null } {
  if (config.dispatchDtype === "bf16") return { x: input.x, scales: null };
  if (config.inputDtype === "fp8-e4m3") return { x: input.x, scales: input.scales ?? null };
  const { q, scales } = quantizeRows(input.x as Uint16Array, config.hidden, scaleFormatOf(config));
  return { x: q, scales };
}

/**
 * Dispatch over all ranks at once, written as plainly as possible. Token t of a DP group is sent
 * by its owner (`ownerOf`) only; it reaches every expert its `topkIdx` row names.
 * Inputs must already be validated.
 */
export function referenceDispatch(config: EpConfig, inputs: RankInput[]): ReferenceDispatch {
  const placement = blockPlacement(config);
  const H = config.hidden;
  const S = scalesPerRow(config, config.dispatchDtype);
  const out: ReferenceDispatch = Array.from({ length: config.ranks }, () =>
    Array.from({ length: placement.localExperts }, () => []),
  );
  for (let src = 0; src < config.ranks; src++) {
    const input = inputs[src];
    const payload = dispatchPayload(config, input);
    const T = tokensOf(config, input);
    for (let t = 0; t < T; t++) {
      if (ownerOf(config, src, t) !== src) continue;
      for (let k = 0; k < config.topK; k++) {
        const e = input.topkIdx[t * config.topK + k];
        if (e < 0) continue;
        out[placement.rankOf(e)][placement.localIndexOf(e)].push({
          srcRank: src,
          srcToken: t,
          slot: k,
          x: payload.x.slice(t * H, (t + 1) * H),
          scales: payload.scales ? payload.scales.slice(t * S, (t + 1) * S) : null,
        });
      }
    }
  }
  // Sources are visited in rank order and tokens in order, so each list is already (srcRank, srcToken)-sorted.
  return out;
}
