// f32_exact.wgsl: fp32 multiplication and division rounded to nearest, ties to even, as IEEE 754
// defines them, with integer operations only. WGSL promises neither: its f32 `*` is "correctly
// rounded" in WGSL's sense (either neighbour of the exact product), its `/` is accurate to 2.5 ULP,
// and a device may flush subnormals. The amax block scales (core codec/amaxScale.ts) need the IEEE
// results bit for bit. Operands and results are fp32 bit patterns.

const F32_INF: u32 = 0x7f800000u;
const F32_QNAN: u32 = 0x7fc00000u;

fn f32_is_nan(b: u32) -> bool {
  return (b & 0x7fffffffu) > F32_INF;
}

/// A finite nonzero fp32 magnitude as sig * 2^ex with sig in [2^23, 2^24) (subnormals normalised).
struct F32Parts {
  sig: u32,
  ex: i32,
}

fn f32_parts(b: u32) -> F32Parts {
  let field = (b >> 23u) & 0xffu;
  let man = b & 0x7fffffu;
  if (field == 0u) {
    let up = 23u - firstLeadingBit(man);
    return F32Parts(man << up, -149 - i32(up));
  }
  return F32Parts(man | 0x800000u, i32(field) - 150);
}

/// fp32 bits of (sig + t) * 2^e rounded to nearest, ties to even, with sign bit `sign`: sig > 0,
/// 0 <= t < 1 and t != 0 exactly when `sticky`. Callers that set `sticky` pass 25 or more significant
/// bits. Overflow gives infinity; results under 2^-126 are subnormals (or zero), never flushed.
fn f32_round_pack(sign: u32, sig: u32, sticky: bool, e: i32) -> u32 {
  let ex = i32(firstLeadingBit(sig)) + e; // sig * 2^e lies in [2^ex, 2^(ex + 1))
  if (ex > 127) {
    return sign | F32_INF;
  }
  let qe = max(ex - 23, -149); // the result's unit in the last place is 2^qe
  let shift = qe - e;
  var m: u32; // the result in units of 2^qe
  if (shift <= 0) {
    m = sig << u32(-shift); // exact: fewer than 25 bits, so sticky is clear
  } else if (shift > 32) {
    return sign; // under half the smallest subnormal: rounds to zero
  } else {
    var q = 0u;
    var r = sig;
    if (shift < 32) {
      q = sig >> u32(shift);
      r = sig - (q << u32(shift));
    }
    let half = 1u << u32(shift - 1);
    m = q;
    if (r > half || (r == half && (sticky || (q & 1u) == 1u))) {
      m = q + 1u;
    }
  }
  // The exponent field is qe + 149 below the significand's implicit bit: a normal m in
  // [2^23, 2^24] adds its implicit bit to it, so a rounding carry (and overflow to infinity)
  // lands on the right bits, and a subnormal m < 2^23 (field 0) rounding up to 2^23 is 2^-126.
  return sign | ((u32(qe + 149) << 23u) + m);
}

/// The 64-bit product of two u32 as (low word, high word).
fn mul_u32_wide(a: u32, b: u32) -> vec2u {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2u((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

/// fp32 bits of a * b rounded to nearest, ties to even (IEEE 754 multiplication). A NaN operand
/// comes back quiet with its own sign (the first, where both are); Inf * 0 is 0x7fc00000; zeros
/// and infinities take the product's sign.
fn f32_mul_rne(a: u32, b: u32) -> u32 {
  if (f32_is_nan(a)) {
    return a | 0x400000u;
  }
  if (f32_is_nan(b)) {
    return b | 0x400000u;
  }
  let sign = (a ^ b) & 0x80000000u;
  let ma = a & 0x7fffffffu;
  let mb = b & 0x7fffffffu;
  if (ma == F32_INF || mb == F32_INF) {
    if (ma == 0u || mb == 0u) {
      return F32_QNAN;
    }
    return sign | F32_INF;
  }
  if (ma == 0u || mb == 0u) {
    return sign;
  }
  let pa = f32_parts(a);
  let pb = f32_parts(b);
  let p = mul_u32_wide(pa.sig, pb.sig); // in [2^46, 2^48): the high word is under 2^16
  // Keep the top 32 bits of the 48; the ones below only decide between a tie and above it.
  let n = firstLeadingBit(p.y) + 1u;
  let sig = (p.y << (32u - n)) | (p.x >> n);
  let sticky = (p.x << (32u - n)) != 0u;
  return f32_round_pack(sign, sig, sticky, pa.ex + pb.ex + i32(n));
}

/// fp32 bits of n / d rounded to nearest, ties to even (IEEE 754 division), by long division of
/// the significands: 26 quotient bits and a sticky bit from the remainder. A NaN operand comes back
/// quiet with its own sign (the first, where both are); 0 / 0 and Inf / Inf are 0x7fc00000;
/// x / 0 is an infinity and x / Inf a zero, with the quotient's sign.
fn f32_div_rne(n: u32, d: u32) -> u32 {
  if (f32_is_nan(n)) {
    return n | 0x400000u;
  }
  if (f32_is_nan(d)) {
    return d | 0x400000u;
  }
  let sign = (n ^ d) & 0x80000000u;
  let mn = n & 0x7fffffffu;
  let md = d & 0x7fffffffu;
  if (mn == F32_INF) {
    if (md == F32_INF) {
      return F32_QNAN;
    }
    return sign | F32_INF;
  }
  if (md == F32_INF) {
    return sign;
  }
  if (md == 0u) {
    if (mn == 0u) {
      return F32_QNAN;
    }
    return sign | F32_INF;
  }
  if (mn == 0u) {
    return sign;
  }
  let pn = f32_parts(n);
  let pd = f32_parts(d);
  var r = pn.sig;
  var ex = pn.ex - pd.ex;
  if (r < pd.sig) {
    r = r << 1u; // the quotient of the significands in [1, 2)
    ex -= 1;
  }
  var q = 0u;
  for (var i = 0u; i < 26u; i++) {
    q = q << 1u;
    if (r >= pd.sig) {
      r -= pd.sig;
      q = q | 1u;
    }
    r = r << 1u; // r < 2 * pd.sig < 2^25
  }
  // q = floor(2^25 * quotient of the significands), q in [2^25, 2^26); r != 0 iff inexact.
  return f32_round_pack(sign, q, r != 0u, ex - 25);
}
