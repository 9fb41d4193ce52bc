// The caller's expert ids, checked on the device before anything moves (core's validateRankInput
// rule for topkIdx): every entry in [-1, E), and no expert named twice by one token. The C and
// Python paths hand device pointers the host cannot read without a synchronisation, so the send
// kernels check here instead: every block of a send kernel checks every entry before its first
// store (shared counters or a peer's heap), so a step with a bad entry moves no byte anywhere.
//
///  topkIdx  Shape: [T, K]  int32 global expert ids, -1 = unused slot
//
// The first bad entry (lowest token, then lowest slot) is recorded as E_BAD_INPUT: peer = the
// entry's value, detail0 = the token, detail1 = the slot | (the earlier slot naming the same
// expert + 1) << 16 (0 there: the value is outside [-1, E)). Every block finds the same entry.
#pragma once
#include <cstdint>

#include "params.cuh"
#include "signal.cuh"

namespace sy {

/// detail1 of E_BAD_INPUT: slot k, and for a repeat the earlier slot q + 1 in the high half.
__host__ __device__ inline uint32_t badInputDetail(int k, int q) {
  return static_cast<uint32_t>(k) | (static_cast<uint32_t>(q + 1) << 16);
}

/// The first bad slot of one token as (k << 8 | (q + 1)), or 0xffff when every slot is good.
/// KMAX >= K: the slots are held in registers (top-k up to 8); larger K reads them again.
template <int KMAX>
__device__ inline uint32_t firstBadSlot(const int32_t* row, int K, int E) {
  int v[KMAX > 0 ? KMAX : 1];
  if constexpr (KMAX > 0) {
#pragma unroll
    for (int k = 0; k < KMAX; ++k) v[k] = k < K ? row[k] : -1;
  }
  for (int k = 0; k < K; ++k) {
    const int e = KMAX > 0 ? v[k] : row[k];
    if (e < -1 || e >= E) return static_cast<uint32_t>(k) << 8;
    if (e < 0) continue;
    for (int q = 0; q < k; ++q) {
      if ((KMAX > 0 ? v[q] : row[q]) == e) return (static_cast<uint32_t>(k) << 8) | static_cast<uint32_t>(q + 1);
    }
  }
  return 0xffffu;
}

/// Block-collective: true in every thread when every entry of topkIdx [T, K] is good; otherwise
/// records E_BAD_INPUT (stage `stage`) for the first bad entry and returns false in every thread.
__device__ __noinline__ bool checkTopk(SyState* state, const int32_t* topkIdx, int T, int K, int E, uint32_t stage) {
  __shared__ unsigned long long sFirst;  // token << 16 | k << 8 | (q + 1): the minimum is the first bad entry
  if (threadIdx.x == 0) sFirst = ~0ull;
  __syncthreads();
  for (int t = threadIdx.x; t < T; t += blockDim.x) {
    const int32_t* row = topkIdx + static_cast<uint64_t>(t) * K;
    const uint32_t bad = K <= 8 ? firstBadSlot<8>(row, K, E) : firstBadSlot<0>(row, K, E);
    if (bad != 0xffffu) {
      atomicMin(&sFirst, (static_cast<unsigned long long>(t) << 16) | bad);
      break;  // later tokens of this thread come after this one
    }
  }
  __syncthreads();
  const unsigned long long first = sFirst;
  if (first == ~0ull) return true;
  if (threadIdx.x == 0) {
    const int t = static_cast<int>(first >> 16), k = static_cast<int>((first >> 8) & 0xff);
    const int q = static_cast<int>(first & 0xff) - 1;
    const int32_t value = topkIdx[static_cast<uint64_t>(t) * K + k];
    recordError(state, E_BAD_INPUT, stage, static_cast<uint32_t>(value), 0xffffffffu, static_cast<uint32_t>(t),
                badInputDetail(k, q));
  }
  return false;
}

}  // namespace sy
