/** Element types on the wire. `bf16` is stored as raw uint16 bits, `fp8-e4m3` as raw uint8 bits. */
export type Dtype = "bf16" | "fp8-e4m3";

export const DTYPES: readonly Dtype[] = ["bf16", "fp8-e4m3"];

/** Bytes per element. */
export function dtypeBytes(dtype: Dtype): number {
  return dtype === "bf16" ? 2 : 1;
}

/** fp8 payloads carry one fp32 scale per this many consecutive elements of a row. */
export const FP8_BLOCK = 128;
