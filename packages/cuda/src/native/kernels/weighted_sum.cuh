// The combine's weighted sum for one token, by one warp:
//   out[h] = bf16_rne( sum_{k = 0..K-1, idx[k] >= 0} fp32(w[k] * x_k[h]) )
// fp32 products and adds in slot order (__fmul_rn / __fadd_rn, never contracted to an FMA), rounded
// once: bit-exact with core's combineToken, like the masked combine_recv.cu. `row(k)` gives slot
// k's bf16 row [hidden]. With `vec` (hidden % 8 == 0, rows and out 16-byte aligned) each lane
// handles 8 outputs at a time and keeps up to 8 slots' 16-byte loads in flight.
#pragma once
#include <cstdint>

#include "codec.cuh"

namespace sy {

__device__ inline void accumulateBf16x8(float* acc, float w, uint4 v) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    acc[2 * j] = __fadd_rn(acc[2 * j], __fmul_rn(w, bf16ToFloat(static_cast<uint16_t>(u[j] & 0xffffu))));
    acc[2 * j + 1] = __fadd_rn(acc[2 * j + 1], __fmul_rn(w, bf16ToFloat(static_cast<uint16_t>(u[j] >> 16))));
  }
}

/// Eight fp32 sums rounded once to bf16 (round to nearest even), packed for one 16-byte store.
__device__ inline uint4 packBf16x8(const float* acc) {
  uint32_t u[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) u[j] = floatToBf16(acc[2 * j]) | static_cast<uint32_t>(floatToBf16(acc[2 * j + 1])) << 16;
  return make_uint4(u[0], u[1], u[2], u[3]);
}

template <typename RowFn>
__device__ inline void warpWeightedSum(const int32_t* idx, const float* w, int K, int H, RowFn row, uint16_t* out,
                                       bool vec, int lane) {
  constexpr int kVec = 8;
  if (vec) {
    for (int h0 = lane * kVec; h0 < H; h0 += 32 * kVec) {
      float acc[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc[j] = 0.0f;
      for (int k0 = 0; k0 < K; k0 += kVec) {
        uint4 v[kVec];
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const int k = k0 + j;
          v[j] = (k < K && idx[k] >= 0) ? *reinterpret_cast<const uint4*>(row(k) + h0) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const int k = k0 + j;
          if (k < K && idx[k] >= 0) accumulateBf16x8(acc, w[k], v[j]);
        }
      }
      *reinterpret_cast<uint4*>(out + h0) = packBf16x8(acc);
    }
  } else {
    for (int h = lane; h < H; h += 32) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        if (idx[k] >= 0) acc = __fadd_rn(acc, __fmul_rn(w[k], bf16ToFloat(row(k)[h])));
      }
      out[h] = floatToBf16(acc);
    }
  }
}

}  // namespace sy
