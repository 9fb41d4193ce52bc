// The combine's sums (combine_send.cuh: an expert rank's partial, combine_recv.cuh: the home's sum of
// partials), 8 bf16 values a lane: fp32 products and adds in order (__fmul_rn / __fadd_rn, never
// contracted to an FMA), rounded once to bf16: bit-exact with core's partialOf / sumPartials.
#pragma once
#include <cstdint>

#include "codec.cuh"

namespace sy {

__device__ inline void accumulateBf16x8(float* acc, float w, uint4 v) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    // bf16 -> fp32 is the bits shifted up: one integer op per value.
    acc[2 * j] = __fadd_rn(acc[2 * j], __fmul_rn(w, __uint_as_float(u[j] << 16)));
    acc[2 * j + 1] = __fadd_rn(acc[2 * j + 1], __fmul_rn(w, __uint_as_float(u[j] & 0xffff0000u)));
  }
}

/// acc[j] = fp32(acc[j] + x[j]) for eight bf16 values (the home's sum of partials).
__device__ inline void accumulateBf16x8Sum(float* acc, uint4 v) {
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    acc[2 * j] = __fadd_rn(acc[2 * j], __uint_as_float(u[j] << 16));
    acc[2 * j + 1] = __fadd_rn(acc[2 * j + 1], __uint_as_float(u[j] & 0xffff0000u));
  }
}

/// Eight fp32 sums rounded once to bf16 (round to nearest even), packed for one 16-byte store:
/// the hardware's conversion (cvt.rn.bf16x2.f32, two values an instruction: the same bits as
/// floatToBf16 for every non-NaN value, subnormals and infinities included), and where a sum is NaN
/// floatToBf16's NaN put in its place (sign | 0x7fc0, the hardware's is 0x7fff).
__device__ inline uint4 packBf16x8(const float* acc) {
  uint32_t u[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u[j]) : "f"(acc[2 * j + 1]), "f"(acc[2 * j]));
  // Any NaN among the eight: one unordered comparison a pair (setp.nan is true when either is NaN),
  // four in all, chained through one predicate.
  uint32_t nan;
  asm("{\n\t.reg .pred p;\n\t"
      "setp.nan.f32 p, %1, %2;\n\t"
      "setp.nan.or.f32 p, %3, %4, p;\n\t"
      "setp.nan.or.f32 p, %5, %6, p;\n\t"
      "setp.nan.or.f32 p, %7, %8, p;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(nan)
      : "f"(acc[0]), "f"(acc[1]), "f"(acc[2]), "f"(acc[3]), "f"(acc[4]), "f"(acc[5]), "f"(acc[6]), "f"(acc[7]));
  if (nan != 0) {  // only the NaNs differ from floatToBf16: theirs is sign | 0x7fc0, the hardware's 0x7fff
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (acc[j] != acc[j]) {
        const uint32_t half = ((__float_as_uint(acc[j]) >> 16) & 0x8000u) | 0x7fc0u;
        const int shift = 16 * (j & 1);
        u[j / 2] = (u[j / 2] & ~(0xffffu << shift)) | half << shift;
      }
    }
  }
  return make_uint4(u[0], u[1], u[2], u[3]);
}

/// One stage's 8 sums of a lane, from acc = 0: sources u < n (at most kN) in order, acc = fp32(acc +
/// fp32(w[u] * x)) (kWeighted) or fp32(acc + x); vec(u) is source u's 16-byte vector of the stage.
/// kMin: the fewest sources the caller passes (no test below it).
template <bool kWeighted, int kN, int kMin = 0, typename Vec>
__device__ inline void stageSum(float (&acc)[8], int n, const float (&w)[8], Vec vec) {
#pragma unroll
  for (int k = 0; k < 8; ++k) acc[k] = 0.0f;
#pragma unroll
  for (int u = 0; u < kN; ++u) {
    if (u < kMin || u < n) {
      if constexpr (kWeighted) accumulateBf16x8(acc, w[u], vec(u));
      else accumulateBf16x8Sum(acc, vec(u));
    }
  }
}

/// Up to kN bf16 sources summed in order, 8 outputs a lane, over the warp's stages [s0, s1) of 256
/// outputs each (stage s: outputs s * 256 + lane * 8 .. + 8 < H), kG stages a batch (kN x kG = 8
/// vectors): while a lane adds one batch it has the next batch's loads in flight (two register
/// buffers), so memory latency overlaps the arithmetic, and few sources still keep 8 loads in flight.
/// kWeighted: acc = fp32(acc + fp32(w[u] * x)), else acc = fp32(acc + x); sources u < n, in order,
/// src(u) their row starts (bf16); store(h0, packed) writes each stage's 8 results (rounded once).
template <bool kWeighted, int kN, int kG, typename Src, typename Store>
__device__ inline void pipelinedSumsOf(int n, int s0, int s1, int H, int lane, const float (&w)[8], Src src,
                                       Store store) {
  uint4 a[kG][kN], b[kG][kN];
  auto load = [&](uint4(&v)[kG][kN], int sb) {
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const int s = sb + g;
      const int h0 = s * 256 + lane * 8;
#pragma unroll
      for (int u = 0; u < kN; ++u) {
        v[g][u] = (u < n && s < s1 && h0 < H) ? *reinterpret_cast<const uint4*>(src(u) + h0) : make_uint4(0, 0, 0, 0);
      }
    }
  };
  auto sum = [&](const uint4(&v)[kG][kN], int sb) {
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      const int s = sb + g;
      const int h0 = s * 256 + lane * 8;
      float acc[8];
      const uint4* vg = v[g];
      stageSum<kWeighted, kN>(acc, n, w, [vg](int u) { return vg[u]; });
      if (s < s1 && h0 < H) store(h0, packBf16x8(acc));
    }
  };
  load(a, s0);
  for (int sb = s0; sb < s1; sb += 2 * kG) {
    load(b, sb + kG);
    sum(a, sb);
    if (sb + kG >= s1) break;
    load(a, sb + 2 * kG);
    sum(b, sb + kG);
  }
}

/// The most sources pipelinedSums<kWeighted, kBatch> sums: 8 with batches of 8 loads, 4 with
/// batches of 4 (a block of 1,024 threads, whose 64 registers a thread hold two such batches).
__host__ __device__ constexpr int batchSources(int batch) { return batch >= 8 ? 8 : 4; }

/// pipelinedSumsOf with the batch shape for n sources, kBatch loads a batch; n <= batchSources(kBatch)
/// is the caller's guarantee. `oneSourceShape` false: a single source takes the two-source shape
/// (half the loads a batch), so a kernel whose sums rarely have one source never fetches that
/// shape's code (each shape is some 600 instructions of hot loop, and an SM's warps run every
/// shape they meet at once).
template <bool kWeighted, int kBatch = 8, typename Src, typename Store>
__device__ inline void pipelinedSums(int n, int s0, int s1, int H, int lane, const float (&w)[8], Src src,
                                     Store store, bool oneSourceShape = true) {
  static_assert(kBatch == 8 || kBatch == 4, "a batch of 8 or 4 loads");
  if (n <= 1 && oneSourceShape) pipelinedSumsOf<kWeighted, 1, kBatch>(n, s0, s1, H, lane, w, src, store);
  else if (n <= 2) pipelinedSumsOf<kWeighted, 2, kBatch / 2>(n, s0, s1, H, lane, w, src, store);
  else if (kBatch < 8 || n <= 4) pipelinedSumsOf<kWeighted, 4, kBatch / 4>(n, s0, s1, H, lane, w, src, store);
  else if constexpr (kBatch >= 8) pipelinedSumsOf<kWeighted, 8, kBatch / 8>(n, s0, s1, H, lane, w, src, store);
}

}  // namespace sy
