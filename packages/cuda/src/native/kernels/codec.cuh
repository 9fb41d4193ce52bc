// Bit-exact device versions of core's codecs (codec/bf16.ts, codec/fp8.ts, codec/blockScale.ts).
// Everything is integer arithmetic on bit patterns, so no rounding mode or FTZ setting can differ
// from the TypeScript reference.
#pragma once
#include <cstdint>

namespace sy {

/// bf16 bits -> fp32 (exact).
__host__ __device__ inline float bf16ToFloat(uint16_t b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
#else
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

/// fp32 -> bf16 bits, round to nearest even; NaN -> (sign | 0x7fc0) as core's numberToBf16.
__host__ __device__ inline uint16_t floatToBf16(float f) {
#ifdef __CUDA_ARCH__
  const uint32_t b = __float_as_uint(f);
#else
  uint32_t b;
  __builtin_memcpy(&b, &f, 4);
#endif
  if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0) {
    return static_cast<uint16_t>(((b >> 16) & 0x8000u) | 0x7fc0u);
  }
  const uint32_t lsb = (b >> 16) & 1u;
  return static_cast<uint16_t>((b + 0x7fffu + lsb) >> 16);
}

/// floor(log2(v)) for v > 0.
__host__ __device__ inline int floorLog2(uint32_t v) {
#ifdef __CUDA_ARCH__
  return 31 - __clz(v);
#else
  return 31 - __builtin_clz(v);
#endif
}

/// A finite bf16 magnitude as mant * 2^exp (mant < 256, integer). Returns false for Inf/NaN.
__host__ __device__ inline bool bf16Split(uint16_t b, uint32_t& mant, int& exp) {
  const uint32_t e = (b >> 7) & 0xffu;
  const uint32_t m = b & 0x7fu;
  if (e == 0xffu) return false;
  if (e == 0) {
    mant = m;
    exp = -133;  // subnormal: m * 2^-126 * 2^-7
  } else {
    mant = 0x80u | m;
    exp = static_cast<int>(e) - 134;  // (1 + m/128) * 2^(e-127)
  }
  return true;
}

constexpr int kMinScaleExp = -126;

/// Block scale exponent from the block's largest finite |x| as bf16 magnitude bits (0 if none):
/// the smallest s >= -126 with amax <= 448 * 2^s (core's scaleExponent).
__host__ __device__ inline int scaleExponent(uint16_t amaxBits) {
  uint32_t mant;
  int exp;
  if ((amaxBits & 0x7fffu) == 0 || !bf16Split(amaxBits & 0x7fffu, mant, exp)) return kMinScaleExp;
  // amax <= 7 * 2^6 * 2^s  <=>  mant <= 7 * 2^(s - exp + 6). Smallest d = s - exp + 6 that fits.
  int d = -3;
  while (true) {
    const bool fits = d >= 0 ? mant <= (7u << d) : (mant << (-d)) <= 7u;
    if (fits) break;
    ++d;
  }
  const int s = d + exp - 6;
  return s < kMinScaleExp ? kMinScaleExp : s;
}

/// The fp32 value 2^s for s in [-126, 127].
__host__ __device__ inline float pow2f(int s) {
  const uint32_t u = static_cast<uint32_t>(s + 127) << 23;
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
#endif
}

/// e4m3fn bits of the exact value x / 2^s for bf16 bits x (core's encodeFp8(bf16ToNumber(x) / 2**s)):
/// round to nearest even, saturate to +-448 (Inf too), NaN -> 0x7f | sign (the sign of the NaN's bf16 bits,
/// as core's quantizeRows).
__host__ __device__ inline uint8_t encodeFp8Scaled(uint16_t x, int s) {
  const uint32_t sign = (x & 0x8000u) ? 0x80u : 0u;
  uint32_t mant;
  int exp;
  if (!bf16Split(x & 0x7fffu, mant, exp)) {
    return static_cast<uint8_t>(sign | ((x & 0x7fu) ? 0x7fu : 0x7eu));  // NaN keeps its sign; +-Inf saturates
  }
  if (mant == 0) return static_cast<uint8_t>(sign);
  const int p = exp - s;  // v = mant * 2^p
  int e = floorLog2(mant) + p;  // floor(log2(v))
  if (e > 8) return static_cast<uint8_t>(sign | 0x7eu);
  const int q = e < -6 ? -9 : e - 3;  // quantum exponent: subnormal 2^-9, normal 2^(e-3)
  const int shift = p - q;
  uint32_t n;
  if (shift >= 0) {
    n = mant << shift;
  } else {
    const int rs = -shift;
    if (rs >= 32) {
      n = 0;
    } else {
      n = mant >> rs;
      const uint32_t rem = mant & ((1u << rs) - 1u);
      const uint32_t half = 1u << (rs - 1);
      if (rem > half || (rem == half && (n & 1u))) ++n;
    }
  }
  if (e < -6) return static_cast<uint8_t>(sign | n);  // n <= 8; 8 is the smallest normal 0x08
  if (n == 16) {
    n = 8;
    ++e;
  }
  const uint32_t m3 = n - 8;
  if (e > 8 || (e == 8 && m3 > 6)) return static_cast<uint8_t>(sign | 0x7eu);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(e + 7) << 3 | m3);
}

/// |x| bits of a bf16 if finite, else 0 (for the block amax: non-finite values are skipped).
__host__ __device__ inline uint16_t finiteAbsBits(uint16_t x) {
  const uint16_t a = x & 0x7fffu;
  return (a >= 0x7f80u) ? 0 : a;
}

}  // namespace sy
