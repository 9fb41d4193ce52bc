// The combine send's sums with their loads in shared memory (weighted_sum.cuh's pipelinedSums keeps
// them in registers): each lane copies its 16-byte vector of every source's next stages into a ring
// of its own in shared memory with cp.async, several stages ahead, and sums a stage once its copies
// have landed. No register holds a byte in flight, so a warp keeps up to kRingVecs vectors a lane
// on their way instead of one batch: at 24 SMs the send is held by its loads in flight and its SMs'
// issue together (docs/design.md), and the stream-floor probe moved its bytes on 24 SMs in 208 us
// this way against 239 with registers.
// Same order of operations and rounding as pipelinedSums (bit-exact with core's partialOf).
#pragma once
#include <cstdint>

#include "bulk_copy.cuh"
#include "weighted_sum.cuh"

namespace sy {

/// 16-byte vectors of ring a lane (a stage of n sources takes n of them).
constexpr int kRingVecs = 24;

/// Shared memory of the rings of a block of `threads` threads.
__host__ __device__ constexpr int ringSmemBytes(int threads) { return threads * kRingVecs * 16; }

/// p, held opaque to the compiler: it keeps the pointer in registers instead of rebuilding it from
/// what it was computed from (an index, a width, a base reloaded from the parameters) at each use.
template <typename T>
__device__ inline T* opaque(T* p) {
  asm("" : "+l"(p));
  return p;
}

/// 16 bytes from global memory to a shared-memory address (smemAddr's), asynchronously.
__device__ inline void cpAsync16To(uint32_t dst, const void* src) {
  SY_BULK_ASM("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

/// kMin to kN sources over stages [s0, s1) (as pipelinedSumsOf), kD stages in the ring: stage
/// s + kD - 1 is copied before stage s is summed; with n * kD2 <= kRingVecs (fewer sources than the
/// shape holds), kD2 stages instead, so the ring's vectors stay in flight whatever n (a stage takes
/// n slots, not kN). `ring`: this lane's first vector; vector i at ring[i * 32].
template <bool kWeighted, int kN, int kMin, int kD, int kD2, typename Src, typename Store>
__device__ inline void ringSumsOf(int n, int s0, int s1, int H, int lane, const float (&w)[8], Src src, Store store,
                                  uint4* ring) {
  static_assert(kN * kD <= kRingVecs && kD <= kD2 && 1 <= kMin && kMin <= kN, "the ring holds kD stages of kN vectors");
  const bool deep = n * kD2 <= kRingVecs;
  const int depth = deep ? kD2 : kD, stride = n * 32, end = depth * stride;  // in vectors
  const uint32_t ringAt = smemAddr(ring);
  // Each source's row start found once and held opaque, the stage's offsets unsigned: a copy's
  // address is then one wide multiply-add.
  const uint16_t* from[kN];
#pragma unroll
  for (int u = 0; u < kN; ++u) from[u] = opaque(src(u));
  const uint32_t lane8 = static_cast<uint32_t>(lane) * 8u, uH = static_cast<uint32_t>(H);
  const auto issue = [&](int s, int slot) {  // stage s into the stage at ring[slot]; one group a stage, empty or not
    const uint32_t h0 = static_cast<uint32_t>(s) * 256u + lane8;
    if (s < s1 && h0 < uH) {
      const uint32_t at = ringAt + static_cast<uint32_t>(slot) * 16u;
#pragma unroll
      for (int u = 0; u < kN; ++u) {
        if (u < kMin || u < n) cpAsync16To(at + u * 512, from[u] + h0);
      }
    }
    SY_BULK_ASM("cp.async.commit_group;" ::: "memory");
  };
#pragma unroll 1
  for (int k = 0; k < depth - 1; ++k) issue(s0 + k, k * stride);
  int slot = 0, last = end - stride;  // the ring stage of s, and of the one summed before it
  for (int s = s0; s < s1; ++s) {
    issue(s + depth - 1, last);  // the stage summed last time is free
    if (deep) {
      SY_BULK_ASM("cp.async.wait_group %0;" ::"n"(kD2 - 1) : "memory");
    } else {
      SY_BULK_ASM("cp.async.wait_group %0;" ::"n"(kD - 1) : "memory");
    }
    const uint32_t h0 = static_cast<uint32_t>(s) * 256u + lane8;
    float acc[8];
    stageSum<kWeighted, kN, kMin>(acc, n, w, [&](int u) { return ring[slot + u * 32]; });
    if (h0 < uH) store(h0, packBf16x8(acc));
    last = slot;
    slot = slot + stride == end ? 0 : slot + stride;
  }
  SY_BULK_ASM("cp.async.wait_all;" ::: "memory");  // the empty groups past s1: none in flight at return
}

/// ringSumsOf with the shape for n (1 to 8: a record has at least its leader's entry) sources (the
/// shapes of pipelinedSums, `oneSourceShape` as there; a shape takes more than half its sources, so
/// those below that are copied and summed untested); compiled for sm_90 and later, else
/// pipelinedSums.
template <bool kWeighted, typename Src, typename Store>
__device__ inline void ringSums(int n, int s0, int s1, int H, int lane, const float (&w)[8], Src src, Store store,
                                uint4* ring, bool oneSourceShape = true) {
  if constexpr (!SY_BULK_COPIES) {
    pipelinedSums<kWeighted>(n, s0, s1, H, lane, w, src, store, oneSourceShape);
  } else if (n <= 1 && oneSourceShape) {
    ringSumsOf<kWeighted, 1, 1, 16, 24>(n, s0, s1, H, lane, w, src, store, ring);
  } else if (n <= 2) {
    ringSumsOf<kWeighted, 2, 1, 12, 24>(n, s0, s1, H, lane, w, src, store, ring);
  } else if (n <= 4) {
    ringSumsOf<kWeighted, 4, 3, 6, 8>(n, s0, s1, H, lane, w, src, store, ring);
  } else {
    ringSumsOf<kWeighted, 8, 5, 3, 4>(n, s0, s1, H, lane, w, src, store, ring);
  }
}

}  // namespace sy
