// The caller's expert ids, checked on the device (core's validateRankInput rule for topkIdx): every
// entry in [-1, E), and no expert named twice by one token. The C and Python paths hand device
// pointers the host cannot read without a synchronisation, so the kernels that read topkIdx check
// it where they read it: dispatch send's plan (plan.cuh, before any store leaves a block: in the
// masked send every block checks every token, the ones outside its chunk in the same loads as the
// ones before it; in the contiguous send each block checks its own chunk and takes the smallest
// bad key of all blocks once their counts are in) and combine recv's count check (combine_check.cuh).
//
///  topkIdx  Shape: [T, K]  int32 global expert ids, -1 = unused slot
//
// The first bad entry (lowest token, then lowest slot) is recorded as E_BAD_INPUT: peer = the
// entry's value, detail0 = the token, detail1 = the slot | (the earlier slot naming the same
// expert + 1) << 16 (0 there: the value is outside [-1, E)). Finders keep the smallest key.
#pragma once
#include <cstdint>

#include "params.cuh"
#include "signal.cuh"

namespace sy {

/// No bad entry (the largest key).
constexpr unsigned long long kNoBadEntry = ~0ull;

/// A bad entry's key, ordered by token, then slot: token << 16 | slot << 8 | (earlier slot + 1).
__device__ inline unsigned long long badKey(int t, int k, int q) {
  return (static_cast<unsigned long long>(t) << 16) | (static_cast<unsigned long long>(k) << 8) |
         static_cast<unsigned long long>(q + 1);
}

/// The first bad slot of one token whose K ids are v[0, K) (K <= KMAX), as badKey, or kNoBadEntry.
template <int KMAX>
__device__ inline unsigned long long firstBadOf(const int (&v)[KMAX], int K, int E, int t) {
#pragma unroll
  for (int k = 0; k < KMAX; ++k) {
    if (k >= K) break;
    if (v[k] < -1 || v[k] >= E) return badKey(t, k, -1);
    if (v[k] < 0) continue;
#pragma unroll
    for (int q = 0; q < k; ++q) {
      if (v[q] == v[k]) return badKey(t, k, q);
    }
  }
  return kNoBadEntry;
}

/// The same, reading the slots from `row` (any K up to kMaxTopK).
__device__ inline unsigned long long firstBadIn(const int32_t* row, int K, int E, int t) {
  for (int k = 0; k < K; ++k) {
    const int e = row[k];
    if (e < -1 || e >= E) return badKey(t, k, -1);
    if (e < 0) continue;
    for (int q = 0; q < k; ++q) {
      if (row[q] == e) return badKey(t, k, q);
    }
  }
  return kNoBadEntry;
}

/// Records the entry of `key` (one thread): E_BAD_INPUT, as the comment at the top says.
__device__ inline void reportBadInput(SyState* state, unsigned long long key, const int32_t* topkIdx, int K,
                                      uint32_t stage) {
  const int t = static_cast<int>(key >> 16), k = static_cast<int>((key >> 8) & 0xff);
  const uint32_t earlier = static_cast<uint32_t>(key & 0xff);
  const int32_t value = topkIdx[static_cast<uint64_t>(t) * K + k];
  recordError(state, E_BAD_INPUT, stage, static_cast<uint32_t>(value), 0xffffffffu, static_cast<uint32_t>(t),
              static_cast<uint32_t>(k) | (earlier << 16));
}

}  // namespace sy
