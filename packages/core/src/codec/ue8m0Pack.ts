import { ue8m0Byte, ue8m0Scale, ue8m0WordsPerRow } from "./ue8m0.js";

/**
 * Packs fp32 scales [rows, S] of the `ue8m0` format into int32 [rows, ceil(S / 4)] (layout in ue8m0.ts).
 * Throws RangeError naming the first scale that is not 2^k for an integer k in [-127, 127].
 */
export function packUe8m0Scales(scales: Float32Array, scalesPerRow: number): Int32Array {
  const S = scalesPerRow;
  const rows = S > 0 ? scales.length / S : 0;
  if (!Number.isInteger(rows))
    throw new RangeError(`packUe8m0Scales: ${scales.length} scales are not whole rows of ${S}`);
  const W = ue8m0WordsPerRow(S);
  const out = new Int32Array(rows * W);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < S; j++) {
      const byte = ue8m0Byte(scales[r * S + j]);
      if (byte < 0)
        throw new RangeError(
          `packUe8m0Scales: scale [${r}, ${j}] = ${scales[r * S + j]} is not 2^k for an integer k in [-127, 127]; ue8m0 scales come from the ue8m0 format's quantiser or fp8 input scales that are such powers of two`,
        );
      out[r * W + (j >> 2)] |= byte << (8 * (j & 3));
    }
  }
  return out;
}

/** The inverse of `packUe8m0Scales`: fp32 scales [rows, S] from int32 words [rows, ceil(S / 4)]. */
export function unpackUe8m0Scales(packed: Int32Array, scalesPerRow: number): Float32Array {
  const S = scalesPerRow;
  const W = ue8m0WordsPerRow(S);
  const rows = W > 0 ? packed.length / W : 0;
  const out = new Float32Array(rows * S);
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < S; j++)
      out[r * S + j] = ue8m0Scale((packed[r * W + (j >> 2)] >>> (8 * (j & 3))) & 0xff);
  return out;
}
