/**
 * UE8M0: an unsigned 8-bit exponent, the value 2^(byte - 127) (byte 255 is NaN and never written).
 * The `ue8m0` format's scales are those of `pow2` (2^s, s >= -126, so bytes 1..254 from core's
 * quantiser); dispatch delivers them as fp32 values 2^s in the scale slots of the layout, and
 * `packUe8m0Scales` gives the packed form engines read (DeepEP's use_ue8m0 layout, row-major):
 *
 *   packed [rows, ceil(S / 4)] int32, S = hidden / 128; byte i (bits 8i..8i+7, little-endian) of
 *   word w of a row is the UE8M0 byte of the row's scale 4w + i; bytes past S are 0.
 */
export const UE8M0_BIAS = 127;

/** The UE8M0 byte of an fp32 scale 2^k (k in [-127, 127]), or -1 when the scale is not such a power of two. */
export function ue8m0Byte(scale: number): number {
  if (!(scale > 0) || !Number.isFinite(scale)) return -1;
  const k = Math.log2(scale);
  if (!Number.isInteger(k) || k < -UE8M0_BIAS || k > 127 || 2 ** k !== scale) return -1;
  return k + UE8M0_BIAS;
}

/** The fp32 scale of a UE8M0 byte 0..254: 2^(byte - 127). */
export function ue8m0Scale(byte: number): number {
  return 2 ** (byte - UE8M0_BIAS);
}

/** int32 words per row of the packed form: ceil(S / 4). */
export function ue8m0WordsPerRow(scalesPerRow: number): number {
  return Math.ceil(scalesPerRow / 4);
}
