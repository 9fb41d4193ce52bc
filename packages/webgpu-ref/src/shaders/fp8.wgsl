// fp8.wgsl: fp8 e4m3 (core codec/fp8.ts), the power-of-two block scales of quantise-on-dispatch
// (core codec/blockScale.ts) and the amax ones (core codec/amaxScale.ts, with f32_exact.wgsl),
// bit-exact with integer operations only, so no float rounding mode or flush-to-zero of the device
// can change a bit.

/// Exponent s of the block scale 2^s: the smallest s >= -126 with amax <= 448 * 2^s, where `amax` is
/// the magnitude (bits & 0x7fff) of the block's largest finite bf16 value (0 if none).
fn fp8_scale_exp(amax: u32) -> i32 {
  let ex = i32(amax >> 7u);
  if (ex == 0) {
    return -126; // zero or subnormal: at most 2^-126
  }
  // amax = 1.m * 2^(ex - 127); 448 = 1.75 * 2^8, so s = e - 8, plus one where 1.m > 1.75.
  var s = ex - 127 - 8;
  if ((amax & 0x7fu) > 0x60u) {
    s = s + 1;
  }
  return max(s, -126);
}

/// fp32 bits of the scale 2^s (s >= -126: always a normal number).
fn fp8_scale_bits(s: i32) -> u32 {
  return u32(s + 127) << 23u;
}

/// x >> n rounded to nearest, ties to even (x < 2^31, n >= 1).
fn shift_right_rne(x: u32, n: u32) -> u32 {
  if (n >= 32u) {
    return 0u; // x < 2^31 <= half of 2^n
  }
  let q = x >> n;
  let r = x - (q << n);
  let half = 1u << (n - 1u);
  if (r > half || (r == half && (q & 1u) == 1u)) {
    return q + 1u;
  }
  return q;
}

/// e4m3 bits of the exact value (bf16 `b`) / 2^s: round to nearest even, saturate to +-448,
/// NaN -> 0x7f | sign, the sign of zero kept (core's quantizeRows).
fn fp8_encode_bf16(b: u32, s: i32) -> u32 {
  let sign = (b >> 8u) & 0x80u;
  let mag = b & 0x7fffu;
  let ex = mag >> 7u;
  if (ex == 0xffu) {
    if ((mag & 0x7fu) != 0u) {
      return sign | 0x7fu; // NaN keeps the sign of its bf16 bits
    }
    return sign | 0x7eu;
  }
  if (mag == 0u) {
    return sign;
  }
  // value = sig * 2^e2 exactly.
  var sig = mag & 0x7fu;
  var e2 = -133;
  if (ex != 0u) {
    sig = sig | 0x80u;
    e2 = i32(ex) - 134;
  }
  let top = i32(firstLeadingBit(sig));
  let ev = top + e2 - s;         // floor(log2(value / 2^s))
  let evc = max(ev, -6);         // e4m3 subnormals share the exponent of the smallest normal
  let shift = e2 - s - (evc - 3); // quantum 2^(evc - 3); the result is sig * 2^shift rounded
  var m: u32;
  if (shift >= 0) {
    m = sig << u32(shift);       // shift <= 3 here
  } else {
    m = shift_right_rne(sig, u32(-shift));
  }
  // m counts quanta: a rounding carry into the next binade lands on the right code by itself.
  let code = u32(evc + 6) * 8u + m;
  return sign | min(code, 0x7eu);
}

/// e4m3 bits of the fp32 value with bits `f`: round to nearest even, saturate to +-448 (+-Infinity
/// too), NaN -> 0x7f | its sign, the sign of zero kept (core's encodeFp8 of an fp32 value).
fn fp8_encode_f32(f: u32) -> u32 {
  let sign = (f >> 24u) & 0x80u;
  let mag = f & 0x7fffffffu;
  if (mag > 0x7f800000u) {
    return sign | 0x7fu;
  }
  if (mag >= 0x43e00000u) {
    return sign | 0x7eu; // 448 and above
  }
  let field = i32(mag >> 23u);
  if (field < 117) {
    return sign; // under 2^-10, half the smallest subnormal 2^-9 (fp32 subnormals and zeros too)
  }
  // value = sig * 2^(field - 150), in [2^-10, 448)
  let sig = (mag & 0x7fffffu) | 0x800000u;
  let evc = max(field - 127, -6); // e4m3 subnormals share the exponent of the smallest normal
  let m = shift_right_rne(sig, u32(evc - field + 147)); // quanta of 2^(evc - 3); shift 20..24
  // As in fp8_encode_bf16: a rounding carry into the next binade (up to 448 at most) is right.
  return sign | (u32(evc + 6) * 8u + m);
}

/// fp32 bits of the value of e4m3 bits `q` (NaN -> 0x7fc00000).
fn fp8_decode_bits(q: u32) -> u32 {
  let sign = (q & 0x80u) << 24u;
  let ex = (q >> 3u) & 0xfu;
  let man = q & 7u;
  if (ex == 15u && man == 7u) {
    return 0x7fc00000u;
  }
  if (ex == 0u) {
    if (man == 0u) {
      return sign;
    }
    let top = firstLeadingBit(man); // value = man * 2^-9 = 1.f * 2^(top - 9)
    return sign | ((top + 118u) << 23u) | ((man ^ (1u << top)) << (23u - top));
  }
  return sign | ((ex + 120u) << 23u) | (man << 20u);
}

/// The amax format's a = max(amax, fl32(1e-4)) as fp32 bits, from `amax`, the magnitude bits
/// (bf16 & 0x7fff) of the block's largest finite value: positive fp32 values order like their bits.
fn amax_a_bits(amax: u32) -> u32 {
  return max(amax << 16u, AMAX_FLOOR_BITS);
}

/// The amax format's stored scale fl32(a * fl32(1/448)), fp32 bits.
fn amax_scale_bits(a: u32) -> u32 {
  return f32_mul_rne(a, FP8_MAX_INV_BITS);
}

/// The amax format's block reciprocal r = fl32(448 / a), fp32 bits (one correctly rounded division).
fn amax_recip_bits(a: u32) -> u32 {
  return f32_div_rne(FP8_MAX_BITS, a);
}

/// e4m3 bits of bf16 `b` in an amax block of reciprocal `r` (fp32 bits): e4m3(fl32(x * r)). A NaN
/// keeps the sign of its bf16 bits (f32_mul_rne returns it), +-Infinity saturates.
fn fp8_encode_amax(b: u32, r: u32) -> u32 {
  return fp8_encode_f32(f32_mul_rne(b << 16u, r));
}
