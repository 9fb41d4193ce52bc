// codec_probe.wgsl: the WGSL codecs applied to an array of test values (tests only; see testing/codecProbe.ts).
// C.tokens is the number of values.

@group(0) @binding(2) var<storage, read_write> data: array<u32>;

/// data[i] = bf16 bits | (s + 200) << 16  ->  e4m3 bits of value / 2^s.
@compute @workgroup_size(WG)
fn fp8_encode(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens) {
    let d = data[i];
    data[i] = fp8_encode_bf16(d & 0xffffu, i32(d >> 16u) - 200);
  }
}

/// data[i] = e4m3 bits  ->  fp32 bits of its value.
@compute @workgroup_size(WG)
fn fp8_decode(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens) {
    data[i] = fp8_decode_bits(data[i] & 0xffu);
  }
}

/// data[i] = amax magnitude bits (bf16 & 0x7fff)  ->  scale exponent s + 200.
@compute @workgroup_size(WG)
fn scale_exp(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens) {
    data[i] = u32(fp8_scale_exp(data[i]) + 200);
  }
}

/// data[i] = fp32 bits  ->  bf16 bits (round to nearest even).
@compute @workgroup_size(WG)
fn bf16_round(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens) {
    data[i] = f32_bits_to_bf16(data[i]);
  }
}

/// Pairs: data[2i] = fp32 bits n, data[2i + 1] = fp32 bits d  ->  data[2i] = fp32 bits of n / d,
/// rounded to nearest even (f32_exact.wgsl). C.tokens is the number of words (twice the pairs).
@compute @workgroup_size(WG)
fn f32_div(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens / 2u) {
    data[2u * i] = f32_div_rne(data[2u * i], data[2u * i + 1u]);
  }
}

/// Pairs: data[2i] = fp32 bits a, data[2i + 1] = fp32 bits b  ->  data[2i] = fp32 bits of a * b,
/// rounded to nearest even (f32_exact.wgsl). C.tokens is the number of words.
@compute @workgroup_size(WG)
fn f32_mul(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens / 2u) {
    data[2u * i] = f32_mul_rne(data[2u * i], data[2u * i + 1u]);
  }
}

/// Pairs: data[2i] = amax magnitude bits (bf16 & 0x7fff)  ->  data[2i] = the amax format's scale,
/// data[2i + 1] = its reciprocal fl32(448 / a) (fp32 bits). C.tokens is the number of words.
@compute @workgroup_size(WG)
fn amax_scale(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens / 2u) {
    let a = amax_a_bits(data[2u * i]);
    data[2u * i] = amax_scale_bits(a);
    data[2u * i + 1u] = amax_recip_bits(a);
  }
}

/// Pairs: data[2i] = bf16 bits, data[2i + 1] = a block's reciprocal r (fp32 bits)  ->  data[2i] =
/// e4m3 bits of fl32(x * r). C.tokens is the number of words.
@compute @workgroup_size(WG)
fn fp8_encode_amax_probe(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = lin(gid, nwg);
  if (i < C.tokens / 2u) {
    data[2u * i] = fp8_encode_amax(data[2u * i] & 0xffffu, data[2u * i + 1u]);
  }
}
