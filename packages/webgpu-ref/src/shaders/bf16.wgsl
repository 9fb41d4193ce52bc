// bf16.wgsl: bfloat16 as raw bits (core codec/bf16.ts), two per u32, element 2w in the low half.

fn bf16_to_f32(bits: u32) -> f32 {
  return bitcast<f32>(bits << 16u);
}

/// fp32 -> bf16 bits, round to nearest even; NaN becomes a quiet NaN with its sign. Integer ops only.
fn f32_bits_to_bf16(b: u32) -> u32 {
  if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0u) {
    return ((b >> 16u) & 0x8000u) | 0x7fc0u;
  }
  let lsb = (b >> 16u) & 1u;
  return ((b + 0x7fffu + lsb) >> 16u) & 0xffffu;
}
